/* The simulated openEuler kernel: uname(2) as glibc returns it, with the release of openEuler
 * 22.03 LTS's kernel in place of the host's (a sandbox node shares the host's kernel).
 * Loaded into every process of the node through /etc/ld.so.preload, so that `uname -r`,
 * Python's os.uname() and Ansible's kernel fact agree, and the node's kernel packages
 * (kernel, kernel-devel, kernel-headers) are named after the running kernel as on a real server.
 * Statically linked programs and raw system calls (Go) still see the host's release.
 * Built by customize.sh with -DKERNEL_RELEASE_PREFIX="..."; the architecture comes from the kernel. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/utsname.h>

int uname(struct utsname *name)
{
    static int (*real_uname)(struct utsname *);
    int result;

    if (real_uname == NULL)
        real_uname = (int (*)(struct utsname *))dlsym(RTLD_NEXT, "uname");
    result = real_uname(name);
    if (result == 0)
        /* uname -m is short (x86_64, aarch64): the release always fits. */
        snprintf(name->release, sizeof(name->release), "%s.%.16s", KERNEL_RELEASE_PREFIX, name->machine);
    return result;
}
