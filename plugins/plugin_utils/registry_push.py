# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of roles/images' registry mode: one image of an archive (``docker save`` or OCI
layout, the archives the node delivery loads) pushed to the operator's registry with the OCI
distribution API (https://github.com/opencontainers/distribution-spec/blob/main/spec.md), in plain
Python, so that the controller needs neither Docker nor skopeo.

Only what the registry lacks is sent: the manifest is asked for by tag (HEAD) and compared by digest,
then each blob by digest (HEAD); a blob the registry lacks is uploaded in one PUT (a POST opens the
upload session), the manifest last. Every failure is a ``RegistryError`` whose text names the
registry, the image, the HTTP status or the cause, and the fix; every request has a timeout.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import ssl
import tarfile
import urllib.error
import urllib.parse
import urllib.request

from ansible_collections.npu.ascend.plugins.plugin_utils.image_delivery import ImageReferenceError, parse_reference

OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json'
OCI_INDEX = 'application/vnd.oci.image.index.v1+json'
OCI_CONFIG = 'application/vnd.oci.image.config.v1+json'
DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json'
DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json'
MANIFEST_ACCEPT = ', '.join([OCI_MANIFEST, DOCKER_MANIFEST, OCI_INDEX, DOCKER_LIST])
_LAYER_TYPES = (  # (magic bytes, OCI media type), the first that matches; else an uncompressed tar
    (b'\x1f\x8b', 'application/vnd.oci.image.layer.v1.tar+gzip'),
    (b'\x28\xb5\x2f\xfd', 'application/vnd.oci.image.layer.v1.tar+zstd'),
)
_DIGEST = re.compile(r'\Asha256:[0-9a-f]{64}\Z')
_REGISTRY = re.compile(r'\A(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?'
                       r'(?P<path>(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)/?\Z')
_CHUNK = 1024 * 1024


class RegistryError(Exception):
    """A push that cannot go on, with the cause and the fix in the message."""


def parse_registry(text, insecure=False):
    """{scheme, host (host[:port]), path, prefix (host[:port]/path), url} of the registry the operator
    names: ``host[:port][/path]``, optionally with ``https://``. ``http://`` is refused unless
    ``insecure`` (the registry's opt-out), since a plain-HTTP registry lets anyone on the path choose
    what runs privileged on the nodes; the kubelet's containerd must then be told so too."""
    if not isinstance(text, str) or not text.strip():
        raise RegistryError('images_registry must be host[:port][/path], got %s' % ascii(text))
    text = text.strip()
    scheme = 'https'
    if '://' in text:
        scheme, text = text.split('://', 1)
        scheme = scheme.lower()
        if scheme not in ('http', 'https'):
            raise RegistryError('images_registry %s: the scheme %s is neither https nor http' % (ascii(text), ascii(scheme)))
    match = _REGISTRY.match(text)
    if not match or (match.group('port') is not None and not 0 < int(match.group('port')) < 65536):
        raise RegistryError('images_registry %s is not host[:port][/path] (the path in lower case, as image names are)'
                            % ascii(text))
    host = match.group('host') + (':' + match.group('port') if match.group('port') is not None else '')
    if '.' not in host and ':' not in host and host != 'localhost':
        raise RegistryError('images_registry %s names no registry host: a first component without a dot or a port is '
                            'read as a Docker Hub path by the kubelet. Fix: give the registry\'s full host name (or '
                            'host:port)' % ascii(text))
    path = match.group('path').strip('/')
    if scheme == 'http' and not insecure:
        raise RegistryError('images_registry http://%s is plain HTTP: anyone between the controller, the nodes and the '
                            'registry could replace what runs privileged on the nodes. Fix: serve the registry over '
                            'HTTPS (with images_registry_ca_file for a private CA), or, accepting the risk, set '
                            'images_registry_insecure=true (and tell the nodes\' containerd the registry is insecure)'
                            % text.rstrip('/'))
    return {'scheme': scheme, 'host': host, 'path': path, 'prefix': host + ('/' + path if path else ''),
            'url': '%s://%s' % (scheme, host)}


def registry_reference(image, registry):
    """The name the pods pull ``image`` by from ``registry``: ``<registry>/<name>:<tag>``, ``name``
    being the last component of the image's path (``ascend-k8sdeviceplugin:v7.3.0`` ->
    ``registry.example:5000/ascend/ascend-k8sdeviceplugin:v7.3.0``). ``image`` must have a tag."""
    ref = parse_reference(image)
    if not ref['tag'] or ref['digest']:
        raise ImageReferenceError('%s must be named by a tag to be pushed' % image)
    prefix = parse_registry(registry, insecure=True)['prefix'] if registry else ''
    if not prefix:
        return image
    return '%s/%s:%s' % (prefix, ref['path'].rsplit('/', 1)[-1], ref['tag'])


def repository_and_tag(image, path):
    """(repository in the registry, tag) of ``image`` pushed under the registry's ``path``."""
    ref = parse_reference(image)
    name = ref['path'].rsplit('/', 1)[-1]
    return ((path.strip('/') + '/' + name) if path.strip('/') else name), ref['tag']


def parse_challenge(header):
    """(scheme in lower case, {parameter: value}) of a ``WWW-Authenticate`` header (RFC 7235, the one
    challenge registries send: ``Bearer realm="...",service="...",scope="..."`` or ``Basic realm=...``)."""
    header = (header or '').strip()
    scheme, _sep, rest = header.partition(' ')
    params = {}
    for match in re.finditer(r'([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|\Z)', rest):
        value = match.group(2)
        value = re.sub(r'\\(.)', r'\1', value) if value is not None else match.group(3)
        params[match.group(1).lower()] = value
    return scheme.lower(), params


def layer_media_type(head):
    """The OCI media type of a layer whose first bytes are ``head``."""
    for magic, media_type in _LAYER_TYPES:
        if head.startswith(magic):
            return media_type
    return 'application/vnd.oci.image.layer.v1.tar'


def _member_digest(archive, name):
    """(sha256:<hex>, size, first bytes) of the archive member ``name``, read once."""
    try:
        info = archive.getmember(name)
    except KeyError:
        raise RegistryError('the archive lacks %s, which its manifest names' % name)
    stream = archive.extractfile(info)
    if stream is None:
        raise RegistryError('%s in the archive is not a file' % name)
    digest, head = hashlib.sha256(), b''
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        if len(head) < 8:
            head += chunk[:8]
        digest.update(chunk)
    return 'sha256:' + digest.hexdigest(), info.size, head


def _read_member(archive, name):
    try:
        stream = archive.extractfile(name)
    except KeyError:
        raise RegistryError('the archive lacks %s, which its manifest names' % name)
    if stream is None:
        raise RegistryError('%s in the archive is not a file' % name)
    return stream.read()


def read_archive_image(archive, image):
    """What pushing ``image`` from the open archive takes: {manifest (bytes), media_type, digest,
    blobs [{digest, size, member, media_type}] (config first, then the layers, each digest once)}.

    An OCI layout (``index.json``; Docker 25 and later also write one) gives its manifest as it is,
    so the registry holds the same digest; a ``docker save`` archive (``manifest.json`` only) gets an
    OCI manifest made from its config and layers. The image is the one tagged ``image`` (compared in
    full form), or the archive's only one."""
    names = set(archive.getnames())
    wanted = _normal(image)
    try:
        if 'index.json' in names:
            index = json.loads(_read_member(archive, 'index.json'))
            manifests = [m for m in index.get('manifests') or [] if isinstance(m, dict)]
            tagged = [m for m in manifests if _normal((m.get('annotations') or {}).get('io.containerd.image.name', '')) == wanted
                      or _normal(_oci_ref_name(m, image)) == wanted]
            chosen = tagged if tagged else manifests
            if len(chosen) != 1:
                raise RegistryError('the OCI layout lists %d images and none is tagged %s; save that one image'
                                    % (len(manifests), image))
            descriptor = chosen[0]
            manifest_bytes = _read_member(archive, _blob_member(descriptor['digest']))
            manifest = json.loads(manifest_bytes)
            media_type = manifest.get('mediaType') or descriptor.get('mediaType') or OCI_MANIFEST
            if media_type in (OCI_INDEX, DOCKER_LIST) or 'layers' not in manifest:
                raise RegistryError('the archive\'s image is an index of several architectures; save the image of one '
                                    'architecture (docker save --platform, or skopeo copy --override-arch)')
            blobs = []
            for descriptor_ in [manifest['config']] + list(manifest['layers']):
                blobs.append({'digest': descriptor_['digest'], 'size': int(descriptor_['size']),
                              'member': _blob_member(descriptor_['digest']), 'media_type': descriptor_.get('mediaType', '')})
        elif 'manifest.json' in names:
            entries = json.loads(_read_member(archive, 'manifest.json'))
            if not isinstance(entries, list) or not entries:
                raise RegistryError('the archive\'s manifest.json lists no image')
            tagged = [e for e in entries if wanted in {_normal(tag) for tag in e.get('RepoTags') or []}]
            chosen = tagged if tagged else (entries if len(entries) == 1 else [])
            if len(chosen) != 1:
                raise RegistryError('the archive holds %d images and none is tagged %s' % (len(entries), image))
            entry = chosen[0]
            blobs = []
            config_digest, config_size, _head = _member_digest(archive, entry['Config'])
            blobs.append({'digest': config_digest, 'size': config_size, 'member': entry['Config'], 'media_type': OCI_CONFIG})
            for member in entry['Layers']:
                digest, size, head = _member_digest(archive, member)
                blobs.append({'digest': digest, 'size': size, 'member': member, 'media_type': layer_media_type(head)})
            manifest = {'schemaVersion': 2, 'mediaType': OCI_MANIFEST,
                        'config': {'mediaType': OCI_CONFIG, 'digest': config_digest, 'size': config_size},
                        'layers': [{'mediaType': b['media_type'], 'digest': b['digest'], 'size': b['size']} for b in blobs[1:]]}
            manifest_bytes = json.dumps(manifest, sort_keys=True, separators=(',', ':')).encode('utf-8')
            media_type = OCI_MANIFEST
        else:
            raise RegistryError('the archive is neither a `docker save` archive (manifest.json) nor an OCI layout '
                                '(index.json)')
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise RegistryError('the archive cannot be read as an image: %s %s' % (type(error).__name__, error))
    for blob in blobs:
        if not _DIGEST.match(str(blob['digest'])):
            raise RegistryError('the archive names the blob %s, not a sha256 digest' % ascii(blob['digest']))
    return {'manifest': manifest_bytes, 'media_type': media_type,
            'digest': 'sha256:' + hashlib.sha256(manifest_bytes).hexdigest(), 'blobs': unique_blobs(blobs)}


def _normal(name):
    try:
        ref = parse_reference(name)
    except ImageReferenceError:
        return None
    return '%s/%s:%s' % (ref['domain'], ref['path'], ref['tag'])


def _oci_ref_name(descriptor, image):
    """The OCI ``org.opencontainers.image.ref.name`` annotation as a reference: a bare tag means the
    image's own name with that tag."""
    name = (descriptor.get('annotations') or {}).get('org.opencontainers.image.ref.name', '')
    if name and ':' not in name and '/' not in name:
        return parse_reference(image)['path'] + ':' + name
    return name


def _blob_member(digest):
    algorithm, _sep, hex_digest = str(digest).partition(':')
    return 'blobs/%s/%s' % (algorithm, hex_digest)


def unique_blobs(blobs):
    """``blobs`` with each digest once, in their first order."""
    seen, out = set(), []
    for blob in blobs:
        if blob['digest'] not in seen:
            seen.add(blob['digest'])
            out.append(blob)
    return out


def blobs_to_upload(blobs, present):
    """The blobs the registry lacks (``present``: the digests it answered a HEAD for), each once."""
    return [blob for blob in unique_blobs(blobs) if blob['digest'] not in set(present)]


def push_needed(local_digest, remote_digest):
    """Whether the tag must be (re)pushed: the registry has no manifest under it, or another one."""
    return remote_digest != local_digest


class Registry:
    """A client of one registry: TLS verified against ``ca_file`` (or the system's CAs) unless
    ``insecure``, Basic or Bearer token authentication with ``username``/``password``, and a
    ``timeout`` (seconds) on every request."""

    def __init__(self, registry, ca_file='', username='', password='', insecure=False, timeout=60.0):
        self.registry = parse_registry(registry, insecure=insecure)
        self.name = self.registry['prefix']
        self.insecure, self.timeout = insecure, float(timeout)
        self.username, self.password = username or '', password or ''
        self.ca_file = ca_file or ''
        if self.registry['scheme'] == 'https':
            try:
                context = ssl.create_default_context(cafile=self.ca_file or None)
            except (OSError, ssl.SSLError) as error:
                raise RegistryError('registry %s: the CA file %s cannot be read (%s). Fix: set images_registry_ca_file '
                                    'to the PEM file of the CA that signed the registry\'s certificate'
                                    % (self.name, self.ca_file, error))
            if insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            handlers = [urllib.request.HTTPSHandler(context=context)]
        else:
            handlers = []
        self._opener = urllib.request.build_opener(*handlers)
        self._auth = {}  # repository -> Authorization header value
        self.requests = []  # (method, path, status) of every request, for the caller and the tests

    # -- HTTP ------------------------------------------------------------------------------------
    def _request(self, method, url, repository, image, headers=None, data=None, ok=(200,), allow=()):
        """(status, headers, body) of one request; statuses in ``allow`` are returned too, anything else
        is a RegistryError."""
        if not url.startswith('http'):
            url = urllib.parse.urljoin(self.registry['url'], url)
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        authorization = self._auth.get(repository)
        if authorization:
            request.add_header('Authorization', authorization)
        what = 'registry %s, image %s: %s %s' % (self.name, image, method, urllib.parse.urlsplit(url).path)
        try:
            response = self._opener.open(request, timeout=self.timeout)
            status, response_headers, body = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, response_headers = error.code, error.headers
            try:
                body = error.read()
            except (OSError, socket.timeout):
                body = b''
        except urllib.error.URLError as error:
            raise RegistryError(self._network_message(what, error.reason))
        except (OSError, socket.timeout, ssl.SSLError) as error:
            raise RegistryError(self._network_message(what, error))
        self.requests.append((method, urllib.parse.urlsplit(url).path, status))
        if status in ok or status in allow:
            return status, response_headers, body
        raise RegistryError('%s answered HTTP %s%s. Fix: %s' % (what, status, _error_text(body), _status_fix(status, self)))

    def _network_message(self, what, reason):
        if isinstance(reason, ssl.SSLCertVerificationError) or 'CERTIFICATE_VERIFY_FAILED' in str(reason):
            return ('%s: the registry\'s TLS certificate is not trusted (%s). Fix: set images_registry_ca_file to the PEM '
                    'file of the CA that signed it%s, or, accepting that anyone on the path could replace the images, '
                    'set images_registry_insecure=true' % (what, getattr(reason, 'verify_message', None) or reason,
                                                           ' (now %s)' % self.ca_file if self.ca_file else ''))
        if isinstance(reason, ssl.SSLError):
            return ('%s: TLS failed (%s). Fix: check that the registry serves HTTPS on that port (a plain-HTTP registry '
                    'needs http:// and images_registry_insecure=true)' % (what, reason))
        if isinstance(reason, (socket.timeout, TimeoutError)) or 'timed out' in str(reason):
            return ('%s: no answer within %g s. Fix: check that the controller reaches the registry, or raise '
                    'images_registry_timeout' % (what, self.timeout))
        return '%s: %s. Fix: check the registry\'s address and that it runs and is reachable from the controller' % (what, reason)

    def authenticate(self, repository, image):
        """Asks ``/v2/`` once and, on a challenge, gets what to send for ``repository`` (pull and push)."""
        status, headers, _body = self._request('GET', '/v2/', repository, image, allow=(401,))
        if status != 401:
            return
        scheme, params = parse_challenge(headers.get('WWW-Authenticate', ''))
        if not self.username:
            raise RegistryError('registry %s, image %s: the registry asks for credentials (%s). Fix: set '
                                'images_registry_username and images_registry_password' % (self.name, image, scheme or 'no scheme'))
        basic = 'Basic ' + base64.b64encode(('%s:%s' % (self.username, self.password)).encode('utf-8')).decode('ascii')
        if scheme == 'basic':
            self._auth[repository] = basic
            self._request('GET', '/v2/', repository, image)
            return
        if scheme != 'bearer' or not params.get('realm'):
            raise RegistryError('registry %s, image %s: the registry asks for authentication %s, which is neither Basic '
                                'nor Bearer with a realm. Fix: use a registry with token or basic authentication'
                                % (self.name, image, ascii(headers.get('WWW-Authenticate', ''))))
        query = {'scope': 'repository:%s:pull,push' % repository}
        if params.get('service'):
            query['service'] = params['service']
        realm = params['realm']
        token_url = realm + ('&' if '?' in realm else '?') + urllib.parse.urlencode(query)
        if urllib.parse.urlsplit(token_url).scheme not in ('https', 'http'):
            raise RegistryError('registry %s: its token realm %s is not an HTTP(S) URL' % (self.name, ascii(realm)))
        if urllib.parse.urlsplit(token_url).scheme == 'http' and not self.insecure:
            raise RegistryError('registry %s, image %s: its token service %s is plain HTTP, which would send the password '
                                'in the clear. Fix: serve it over HTTPS, or set images_registry_insecure=true'
                                % (self.name, image, realm))
        self._auth[repository] = basic
        _status, _headers, body = self._request('GET', token_url, repository, image)
        try:
            answer = json.loads(body)
            token = answer.get('token') or answer.get('access_token')
        except (ValueError, AttributeError):
            token = None
        if not token:
            raise RegistryError('registry %s, image %s: the token service %s answered no token. Fix: check '
                                'images_registry_username and images_registry_password' % (self.name, image, realm))
        self._auth[repository] = 'Bearer ' + token

    # -- the push --------------------------------------------------------------------------------
    def manifest_digest(self, repository, tag, image):
        """The digest the registry has under ``repository:tag``, or None."""
        status, headers, _body = self._request('HEAD', '/v2/%s/manifests/%s' % (repository, tag), repository, image,
                                               headers={'Accept': MANIFEST_ACCEPT}, allow=(404,))
        if status == 404:
            return None
        return headers.get('Docker-Content-Digest') or 'unknown'

    def has_blob(self, repository, digest, image):
        status, _headers, _body = self._request('HEAD', '/v2/%s/blobs/%s' % (repository, digest), repository, image,
                                                allow=(404,))
        return status == 200

    def upload_blob(self, repository, blob, stream, image):
        """One blob in one PUT after the POST that opens the session (monolithic upload), streamed
        from ``stream`` with its size; the registry checks the digest."""
        _status, headers, _body = self._request('POST', '/v2/%s/blobs/uploads/' % repository, repository, image, ok=(202,))
        location = headers.get('Location')
        if not location:
            raise RegistryError('registry %s, image %s: the upload session has no Location. Fix: use a registry that '
                                'implements the OCI distribution API' % (self.name, image))
        location = urllib.parse.urljoin(self.registry['url'] + '/v2/%s/blobs/uploads/' % repository, location)
        location += ('&' if '?' in location else '?') + urllib.parse.urlencode({'digest': blob['digest']})
        self._request('PUT', location, repository, image, data=stream, ok=(201,),
                      headers={'Content-Type': 'application/octet-stream', 'Content-Length': str(blob['size'])})

    def put_manifest(self, repository, tag, image_plan, image):
        _status, headers, _body = self._request('PUT', '/v2/%s/manifests/%s' % (repository, tag), repository, image,
                                                data=image_plan['manifest'], ok=(201,),
                                                headers={'Content-Type': image_plan['media_type']})
        digest = headers.get('Docker-Content-Digest')
        if digest and digest != image_plan['digest']:
            raise RegistryError('registry %s, image %s: the registry stored the manifest as %s, not %s. Fix: use a registry '
                                'that keeps manifests byte for byte' % (self.name, image, digest, image_plan['digest']))


def push(archive_path, image, registry, check_mode=False):
    """Pushes ``image`` of the archive at ``archive_path`` to ``registry`` (a ``Registry``) as
    ``registry_reference(image, ...)``, sending only what the registry lacks. Returns {reference,
    digest, changed, uploaded [digests], present [digests]}."""
    target = registry_reference(image, registry.name)
    repository, tag = repository_and_tag(image, registry.registry['path'])
    try:
        with tarfile.open(archive_path, mode='r:*') as archive:
            image_plan = read_archive_image(archive, image)
            registry.authenticate(repository, target)
            result = {'reference': target, 'digest': image_plan['digest'], 'changed': False, 'uploaded': [], 'present': []}
            if not push_needed(image_plan['digest'], registry.manifest_digest(repository, tag, target)):
                result['present'] = [blob['digest'] for blob in image_plan['blobs']]
                return result
            present = [blob['digest'] for blob in image_plan['blobs'] if registry.has_blob(repository, blob['digest'], target)]
            missing = blobs_to_upload(image_plan['blobs'], present)
            result.update(changed=True, present=present, uploaded=[blob['digest'] for blob in missing])
            if check_mode:
                return result
            for blob in missing:
                stream = archive.extractfile(blob['member'])
                registry.upload_blob(repository, blob, stream, target)
            registry.put_manifest(repository, tag, image_plan, target)
            return result
    except (tarfile.TarError, OSError) as error:
        raise RegistryError('image %s: the archive %s cannot be read (%s). Fix: give the `docker save` or OCI layout '
                            'archive the node delivery uses' % (image, archive_path, error))


def _error_text(body):
    """The registry's error codes and messages (``{"errors": [{code, message}]}``), short."""
    try:
        errors = json.loads(body or b'{}').get('errors') or []
        text = '; '.join('%s %s' % (e.get('code', ''), e.get('message', '')) for e in errors if isinstance(e, dict))
    except (ValueError, AttributeError):
        text = ''
    return (' (%s)' % text[:300]) if text else ''


def _status_fix(status, registry):
    if status in (401, 403):
        return ('check images_registry_username and images_registry_password, and that this account may push to %s'
                % registry.name)
    if status == 404:
        return 'check that %s is a registry (the OCI distribution API under /v2/) and its path' % registry.name
    if status == 413:
        return 'raise the request size limit of the proxy in front of the registry'
    if status >= 500:
        return 'look at the registry\'s log; run again once it is healthy'
    return 'look at the registry\'s log and images_registry'
