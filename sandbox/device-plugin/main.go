// Command device-plugin is the sandbox's stand-in for Huawei's Ascend device plugin.
//
// Huawei's plugin cannot be built here (its module is not served), so this one speaks the same
// kubelet device plugin API (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1) the way Huawei's does:
// it registers huawei.com/Ascend910 or huawei.com/Ascend310P (from the chip npu-smi names) with
// the kubelet, lists one device per chip (ID "<Ascend910>-<logic id>") with its health from
// `npu-smi info -t health`, and answers Allocate with ASCEND_VISIBLE_DEVICES=<logic ids> for the
// Ascend Docker Runtime (-useAscendDocker=true) or with the device nodes themselves (false).
// On an Atlas A3 (two dies under one NPU id, each its own chip and device) it prefers whole NPUs
// when the kubelet asks which devices to give (GetPreferredAllocation): MindCluster's plugin hands
// both dies of a module to a container together (DCMI policy MultiDieUnion) unless
// -useSingleDieMode is set, and Huawei documents even A3 requests as whole die pairs.
// It takes Huawei's command line (-useAscendDocker, -logFile, -logLevel, -presetVirtualDevice), so
// the DaemonSet the npu.ascend.device_plugin role renders runs it unchanged.
//
// Static vNPUs (-presetVirtualDevice=true, Huawei's default): a chip with vNPUs (`npu-smi info -t
// info-vnpu`) is published as its vNPUs, one resource per template (huawei.com/Ascend310P-2c, ID
// "Ascend310P-2c-<vnpu id>-<logic id>"), and a container gets the vNPU's id in
// ASCEND_VISIBLE_DEVICES (or /dev/davinci<vnpu id>). As with Huawei's plugin, the vNPUs are read
// at start only: after a vNPU is created or destroyed the plugin must be restarted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Chip is one NPU chip as npu-smi shows it.
type Chip struct {
	NPU     int
	Chip    int
	LogicID int
	Name    string // e.g. 910B4, 310P3
	Healthy bool
}

// The management devices every NPU container gets besides its davinci<N> (facts reference, 4).
var sharedDevices = []string{"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}

const npuSmiTimeout = 20 * time.Second

// version is the digest of the sources, stamped by tests/k8s/build.sh.
var version = "dev"

// ResourceForChip is the extended resource Huawei's plugin publishes for a chip name.
func ResourceForChip(name string) (string, error) {
	// An A3's npu-smi names its dies "Ascend910" (A2: "910B4"): the same resource.
	chip := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "ASCEND")
	switch {
	case strings.HasPrefix(chip, "910"):
		return "huawei.com/Ascend910", nil
	case strings.HasPrefix(chip, "310P"):
		return "huawei.com/Ascend310P", nil
	case chip == "310":
		return "huawei.com/Ascend310", nil
	}
	return "", fmt.Errorf("no Ascend resource is known for chip %q", name)
}

// PublishedResource is the resource the chips are published as: the override when one is given
// (-resourceName), else Huawei's for the chip.
func PublishedResource(override, chipName string) (string, error) {
	if override != "" {
		if !strings.Contains(override, "/") {
			return "", fmt.Errorf("-resourceName %q is not a vendor/name extended resource", override)
		}
		return override, nil
	}
	return ResourceForChip(chipName)
}

// ParseChipMap reads `npu-smi info -m`: one row per chip, "NPU ID  Chip ID  Chip Logic ID  Chip
// Name"; MCU rows (logic id "-") are not chips a container can get.
func ParseChipMap(text string) ([]Chip, error) {
	var chips []Chip
	header := false
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "NPU ID") {
			header = true
			continue
		}
		if !header || len(fields) < 4 || fields[2] == "-" {
			continue
		}
		npu, errNPU := strconv.Atoi(fields[0])
		chip, errChip := strconv.Atoi(fields[1])
		logic, errLogic := strconv.Atoi(fields[2])
		if errNPU != nil || errChip != nil || errLogic != nil {
			return nil, fmt.Errorf("npu-smi info -m: unexpected row %q", strings.TrimSpace(line))
		}
		chips = append(chips, Chip{NPU: npu, Chip: chip, LogicID: logic, Name: fields[len(fields)-1]})
	}
	if !header {
		return nil, errors.New("npu-smi info -m: no chip table in its output")
	}
	return chips, nil
}

// ParseHealth reads `npu-smi info -t health -i N -c C`: "Health Status : OK".
func ParseHealth(text string) (string, error) {
	for _, line := range strings.Split(text, "\n") {
		key, value, found := strings.Cut(line, ":")
		if found && strings.TrimSpace(key) == "Health Status" {
			return strings.TrimSpace(value), nil
		}
	}
	return "", errors.New("npu-smi info -t health: no Health Status line")
}

// VisibleDevices is the ASCEND_VISIBLE_DEVICES value for allocated device IDs: logic ids,
// sorted, comma-separated.
func VisibleDevices(resource string, ids []string) (string, []int, error) {
	prefix := resource[strings.LastIndex(resource, "/")+1:] + "-"
	var logic []int
	for _, id := range ids {
		// A vNPU's id also names its chip after the vNPU id ("Ascend310P-2c-100-0"): the vNPU id counts.
		number, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(id, prefix), "-", 2)[0])
		if !strings.HasPrefix(id, prefix) || err != nil || number < 0 {
			return "", nil, fmt.Errorf("device id %q is not one of %s<logic id>", id, prefix)
		}
		logic = append(logic, number)
	}
	sort.Ints(logic)
	text := make([]string, len(logic))
	for index, number := range logic {
		text[index] = strconv.Itoa(number)
	}
	return strings.Join(text, ","), logic, nil
}

// Inventory asks npu-smi for the chips and their health.
type Inventory struct {
	NpuSmi string
}

func (inventory Inventory) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), npuSmiTimeout)
	defer cancel()
	command := exec.CommandContext(ctx, inventory.NpuSmi, args...)
	command.Env = append(os.Environ(), "LC_ALL=C")
	output, err := command.CombinedOutput()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s %s: no answer within %s", inventory.NpuSmi, strings.Join(args, " "), npuSmiTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", inventory.NpuSmi, strings.Join(args, " "), err, strings.TrimSpace(string(output)))
	}
	return string(output), nil
}

// Chips lists the chips; an error means the card list could not be read at all.
func (inventory Inventory) Chips() ([]Chip, error) {
	text, err := inventory.run("info", "-m")
	if err != nil {
		return nil, err
	}
	chips, err := ParseChipMap(text)
	if err != nil {
		return nil, err
	}
	for index := range chips {
		health, err := inventory.run("info", "-t", "health", "-i", strconv.Itoa(chips[index].NPU),
			"-c", strconv.Itoa(chips[index].Chip))
		if err == nil {
			var status string
			status, err = ParseHealth(health)
			chips[index].Healthy = err == nil && status == "OK"
		}
		if err != nil {
			log.Printf("chip %d (NPU %d chip %d) counted unhealthy: %v", chips[index].LogicID, chips[index].NPU, chips[index].Chip, err)
		}
	}
	return chips, nil
}

// Plugin serves one resource to the kubelet.
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	Resource        string
	Socket          string
	UseAscendDocker bool

	// NPUOf maps a device id to its NPU id where whole NPUs are preferred (A3 dies), else nil.
	NPUOf map[string]int

	mu      sync.Mutex
	devices []*pluginapi.Device
	changed chan struct{}
}

// MultiDieNPUs maps each device id of the whole-chip resource to its NPU id when the chips are
// dies of multi-die NPUs (an Atlas A3: Ascend910 with two chips under one NPU id), else nil.
func MultiDieNPUs(resource string, chips []Chip) map[string]int {
	perNPU := map[int]int{}
	for _, chip := range chips {
		perNPU[chip.NPU]++
	}
	multiDie := false
	for _, count := range perNPU {
		multiDie = multiDie || count > 1
	}
	if !multiDie || !strings.HasSuffix(resource, "/Ascend910") {
		return nil
	}
	prefix := resource[strings.LastIndex(resource, "/")+1:] + "-"
	npuOf := map[string]int{}
	for _, chip := range chips {
		npuOf[prefix+strconv.Itoa(chip.LogicID)] = chip.NPU
	}
	return npuOf
}

// PreferredDevices picks size devices from available, those of mustInclude first, then whole NPUs
// (every die of the NPU available) in NPU order, then single dies; nil when available is short.
func PreferredDevices(available, mustInclude []string, size int, npuOf map[string]int) []string {
	if size > len(available) {
		return nil
	}
	chosen := []string{}
	taken := map[string]bool{}
	take := func(id string) {
		if !taken[id] && len(chosen) < size {
			taken[id] = true
			chosen = append(chosen, id)
		}
	}
	byNPU := map[int][]string{}
	dies := map[int]int{}
	for _, npu := range npuOf {
		dies[npu]++
	}
	for _, id := range available {
		if npu, known := npuOf[id]; known {
			byNPU[npu] = append(byNPU[npu], id)
		}
	}
	// A die that must go takes its sibling with it when the sibling is free.
	for _, id := range mustInclude {
		take(id)
		if npu, known := npuOf[id]; known {
			for _, sibling := range byNPU[npu] {
				take(sibling)
			}
		}
	}
	npus := make([]int, 0, len(byNPU))
	for npu := range byNPU {
		npus = append(npus, npu)
	}
	sort.Ints(npus)
	for _, npu := range npus {
		if len(byNPU[npu]) == dies[npu] && size-len(chosen) >= dies[npu] {
			sort.Strings(byNPU[npu])
			for _, id := range byNPU[npu] {
				take(id)
			}
		}
	}
	rest := append([]string(nil), available...)
	sort.Strings(rest)
	for _, id := range rest {
		take(id)
	}
	return chosen
}

// GetPreferredAllocation answers the kubelet's question which devices to give a container.
func (plugin *Plugin) GetPreferredAllocation(_ context.Context, request *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	response := &pluginapi.PreferredAllocationResponse{}
	for _, container := range request.ContainerRequests {
		chosen := PreferredDevices(container.AvailableDeviceIDs, container.MustIncludeDeviceIDs,
			int(container.AllocationSize), plugin.NPUOf)
		log.Printf("GetPreferredAllocation of %d: %v", container.AllocationSize, chosen)
		response.ContainerResponses = append(response.ContainerResponses,
			&pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: chosen})
	}
	return response, nil
}

func (plugin *Plugin) options() *pluginapi.DevicePluginOptions {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: plugin.NPUOf != nil}
}

func devicesOf(resource string, chips []Chip) []*pluginapi.Device {
	prefix := resource[strings.LastIndex(resource, "/")+1:] + "-"
	devices := make([]*pluginapi.Device, 0, len(chips))
	for _, chip := range chips {
		health := pluginapi.Unhealthy
		if chip.Healthy {
			health = pluginapi.Healthy
		}
		devices = append(devices, &pluginapi.Device{ID: prefix + strconv.Itoa(chip.LogicID), Health: health})
	}
	sort.Slice(devices, func(a, b int) bool { return devices[a].ID < devices[b].ID })
	return devices
}

// SetDevices replaces the device list; ListAndWatch streams it when it changed.
func (plugin *Plugin) SetDevices(devices []*pluginapi.Device) {
	plugin.mu.Lock()
	defer plugin.mu.Unlock()
	if reflect.DeepEqual(devices, plugin.devices) {
		return
	}
	plugin.devices = devices
	close(plugin.changed)
	plugin.changed = make(chan struct{})
}

func (plugin *Plugin) snapshot() ([]*pluginapi.Device, chan struct{}) {
	plugin.mu.Lock()
	defer plugin.mu.Unlock()
	return plugin.devices, plugin.changed
}

func (plugin *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return plugin.options(), nil
}

func (plugin *Plugin) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		devices, changed := plugin.snapshot()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devices}); err != nil {
			return err
		}
		select {
		case <-changed:
		case <-stream.Context().Done():
			return nil
		}
	}
}

// Allocate answers as Huawei's plugin does: the Ascend Docker Runtime gives the container the
// NPUs named in ASCEND_VISIBLE_DEVICES; without it, the device nodes are handed over directly.
func (plugin *Plugin) Allocate(_ context.Context, request *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	response := &pluginapi.AllocateResponse{}
	for _, container := range request.ContainerRequests {
		visible, logic, err := VisibleDevices(plugin.Resource, container.DevicesIds)
		if err != nil {
			return nil, err
		}
		answer := &pluginapi.ContainerAllocateResponse{}
		if plugin.UseAscendDocker {
			answer.Envs = map[string]string{"ASCEND_VISIBLE_DEVICES": visible}
		} else {
			paths := make([]string, 0, len(logic)+len(sharedDevices))
			for _, number := range logic {
				paths = append(paths, "/dev/davinci"+strconv.Itoa(number))
			}
			for _, path := range append(paths, sharedDevices...) {
				answer.Devices = append(answer.Devices, &pluginapi.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"})
			}
		}
		log.Printf("Allocate %v: ASCEND_VISIBLE_DEVICES=%s", container.DevicesIds, visible)
		response.ContainerResponses = append(response.ContainerResponses, answer)
	}
	return response, nil
}

func (plugin *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// serve starts the gRPC server on the plugin's socket and registers it with the kubelet.
func (plugin *Plugin) serve(directory string) (*grpc.Server, error) {
	socket := filepath.Join(directory, plugin.Socket)
	if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	server := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(server, plugin)
	go func() { _ = server.Serve(listener) }()

	connection, err := grpc.NewClient("unix://"+filepath.Join(directory, filepath.Base(pluginapi.KubeletSocket)),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		server.Stop()
		return nil, err
	}
	defer connection.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(connection).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: plugin.Socket, ResourceName: plugin.Resource,
		Options: plugin.options(),
	})
	if err != nil {
		server.Stop()
		return nil, fmt.Errorf("registering %s with the kubelet: %w", plugin.Resource, err)
	}
	log.Printf("registered %s with the kubelet (socket %s)", plugin.Resource, socket)
	return server, nil
}

// sameFile says whether path is still the socket the plugin registered with. The inode alone does
// not tell: a restarted kubelet removes its socket and makes a new one, which the filesystem may give
// the freed inode number (seen in a sandbox node: the plugin never registered again), so the change
// time counts too.
func sameFile(path string, info os.FileInfo) bool {
	current, err := os.Stat(path)
	return err == nil && os.SameFile(current, info) && current.ModTime().Equal(info.ModTime())
}

func main() {
	useAscendDocker := flag.Bool("useAscendDocker", true, "containers get their NPUs through the Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES)")
	logFile := flag.String("logFile", "", "also write the log to this file")
	logLevel := flag.Int("logLevel", 0, "accepted for Huawei's command line; this stand-in logs one level")
	npuSmi := flag.String("npuSmi", "npu-smi", "the npu-smi command to list chips and their health")
	directory := flag.String("pluginDir", pluginapi.DevicePluginPath, "the kubelet's device plugin directory")
	interval := flag.Duration("pollInterval", 5*time.Second, "how often npu-smi is asked again")
	showVersion := flag.Bool("version", false, "print the version and exit")
	presetVirtual := flag.Bool("presetVirtualDevice", true, "publish the chips' static vNPUs (read at start)")
	resourceName := flag.String("resourceName", "", "publish the chips as this extended resource instead of "+
		"the chip's Huawei one (not Huawei's flag: the sandbox's stand-in for Alibaba's aliyun.com/npu plugin)")
	flag.Parse()
	if *showVersion {
		fmt.Println("device-plugin stand-in " + version)
		return
	}
	_ = logLevel
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if *logFile != "" {
		if err := os.MkdirAll(filepath.Dir(*logFile), 0o750); err == nil {
			if file, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640); err == nil {
				log.SetOutput(io.MultiWriter(os.Stderr, file))
			}
		}
	}
	inventory := Inventory{NpuSmi: *npuSmi}

	// The resource follows the chip, as with Huawei's plugin; no chip list, nothing to publish.
	var plugins []*Plugin
	var vnpus map[int][]VNPU
	var wholeResource string
	for plugins == nil {
		chips, err := inventory.Chips()
		if err == nil && len(chips) == 0 {
			err = errors.New("npu-smi lists no chips")
		}
		if err == nil {
			if wholeResource, err = PublishedResource(*resourceName, chips[0].Name); err == nil {
				if *presetVirtual {
					vnpus = inventory.VNPUs(chips)
				}
				for _, resource := range ResourcesOf(wholeResource, chips, vnpus) {
					plugin := &Plugin{Resource: resource, UseAscendDocker: *useAscendDocker, changed: make(chan struct{}),
						Socket: "Ascend-" + resource[strings.LastIndex(resource, "/")+1:] + ".sock"}
					if resource == wholeResource {
						plugin.NPUOf = MultiDieNPUs(resource, chips)
					}
					plugin.SetDevices(DevicesFor(resource, wholeResource, chips, vnpus))
					plugins = append(plugins, plugin)
				}
				break
			}
		}
		log.Printf("failed to get card list: %v; retrying in %s", err, *interval)
		time.Sleep(*interval)
	}

	kubeletSocket := filepath.Join(*directory, filepath.Base(pluginapi.KubeletSocket))
	servers := make([]*grpc.Server, len(plugins))
	var registeredWith os.FileInfo
	for {
		// A restarted kubelet makes a new socket and forgets its plugins: register again.
		if registeredWith == nil || !sameFile(kubeletSocket, registeredWith) {
			for index, server := range servers {
				if server != nil {
					server.Stop()
					servers[index] = nil
				}
			}
			if info, err := os.Stat(kubeletSocket); err == nil {
				registered := true
				for index, plugin := range plugins {
					if servers[index], err = plugin.serve(*directory); err != nil {
						log.Printf("%v; retrying in %s", err, *interval)
						registered = false
					}
				}
				if registered {
					registeredWith = info
				}
			} else {
				log.Printf("waiting for the kubelet socket %s", kubeletSocket)
			}
		}
		time.Sleep(*interval)
		chips, err := inventory.Chips()
		for _, plugin := range plugins {
			if err != nil {
				// What Huawei's plugin does when DCMI fails: every device unhealthy, none allocatable.
				log.Printf("failed to get card list: %v", err)
				devices, _ := plugin.snapshot()
				unhealthy := make([]*pluginapi.Device, len(devices))
				for index, device := range devices {
					unhealthy[index] = &pluginapi.Device{ID: device.ID, Health: pluginapi.Unhealthy}
				}
				plugin.SetDevices(unhealthy)
				continue
			}
			plugin.SetDevices(DevicesFor(plugin.Resource, wholeResource, chips, vnpus))
		}
	}
}

// VNPU is one static vNPU as `npu-smi info -t info-vnpu` lists it.
type VNPU struct {
	ID       int
	Template string
}

// ParseVNPUs reads the vNPU table of `npu-smi info -t info-vnpu -i N -c C`: the rows under the
// header naming "Vnpu ID" and "Template Name", cells between "|".
func ParseVNPUs(text string) ([]VNPU, error) {
	idColumn, templateColumn := -1, -1
	var vnpus []VNPU
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.Trim(strings.TrimSpace(line), "|")
		if !strings.Contains(trimmed, "|") {
			continue
		}
		cells := strings.Split(trimmed, "|")
		for index := range cells {
			cells[index] = strings.TrimSpace(cells[index])
		}
		if idColumn < 0 {
			for index, cell := range cells {
				switch strings.ToLower(cell) {
				case "vnpu id":
					idColumn = index
				case "template name":
					templateColumn = index
				}
			}
			continue
		}
		if templateColumn < 0 || len(cells) <= idColumn || len(cells) <= templateColumn {
			return nil, fmt.Errorf("npu-smi info -t info-vnpu: unexpected row %q", trimmed)
		}
		id, err := strconv.Atoi(cells[idColumn])
		if err != nil {
			return nil, fmt.Errorf("npu-smi info -t info-vnpu: unexpected row %q", trimmed)
		}
		vnpus = append(vnpus, VNPU{ID: id, Template: cells[templateColumn]})
	}
	if idColumn < 0 {
		return nil, errors.New("npu-smi info -t info-vnpu: no vNPU table in its output")
	}
	return vnpus, nil
}

// VNPUType is the device type Huawei's plugin publishes a template as: vir02 on a 310P ->
// Ascend310P-2c, vir10_3c_16g_nm -> Ascend910-10c.3cpu.16g.ndvpp (MindCluster's template table).
func VNPUType(chipName, template string) (string, error) {
	parts := strings.Split(template, "_")
	cores, err := strconv.Atoi(strings.TrimPrefix(parts[0], "vir"))
	if !strings.HasPrefix(parts[0], "vir") || err != nil {
		return "", fmt.Errorf("%q is not a vNPU template", template)
	}
	name := fmt.Sprintf("Ascend910-%dc", cores)
	if strings.HasPrefix(strings.ToUpper(chipName), "310P") {
		name = fmt.Sprintf("Ascend310P-%dc", cores)
	}
	for _, part := range parts[1:] {
		switch {
		case part == "ndvpp" || part == "nm":
			name += ".ndvpp"
		case part == "dvpp" || part == "m":
			name += ".dvpp"
		case strings.HasSuffix(part, "c"):
			name += "." + strings.TrimSuffix(part, "c") + "cpu"
		case strings.HasSuffix(part, "g"):
			name += "." + part
		default:
			return "", fmt.Errorf("%q is not a vNPU template", template)
		}
	}
	return name, nil
}

// VNPUs reads the vNPUs of every chip (by logic id); a chip npu-smi cannot list vNPUs for has none.
func (inventory Inventory) VNPUs(chips []Chip) map[int][]VNPU {
	found := map[int][]VNPU{}
	for _, chip := range chips {
		text, err := inventory.run("info", "-t", "info-vnpu", "-i", strconv.Itoa(chip.NPU), "-c", strconv.Itoa(chip.Chip))
		if err == nil {
			var vnpus []VNPU
			if vnpus, err = ParseVNPUs(text); err == nil && len(vnpus) > 0 {
				found[chip.LogicID] = vnpus
				log.Printf("chip %d: static vNPUs %+v", chip.LogicID, vnpus)
			}
		}
		if err != nil {
			log.Printf("chip %d: no static vNPUs read: %v", chip.LogicID, err)
		}
	}
	return found
}

// ResourcesOf lists the resources to publish: the whole-chip one while a chip has no vNPUs, and
// one per vNPU type.
func ResourcesOf(wholeResource string, chips []Chip, vnpus map[int][]VNPU) []string {
	seen := map[string]bool{}
	var resources []string
	for _, chip := range chips {
		names := []string{wholeResource}
		if len(vnpus[chip.LogicID]) > 0 {
			names = nil
			for _, vnpu := range vnpus[chip.LogicID] {
				if kind, err := VNPUType(chip.Name, vnpu.Template); err == nil {
					names = append(names, "huawei.com/"+kind)
				}
			}
		}
		for _, name := range names {
			if !seen[name] {
				seen[name] = true
				resources = append(resources, name)
			}
		}
	}
	sort.Strings(resources)
	return resources
}

// DevicesFor lists the devices of one resource: whole chips without vNPUs, or the vNPUs of that
// type, each as healthy as its chip.
func DevicesFor(resource, wholeResource string, chips []Chip, vnpus map[int][]VNPU) []*pluginapi.Device {
	if resource == wholeResource {
		var whole []Chip
		for _, chip := range chips {
			if len(vnpus[chip.LogicID]) == 0 {
				whole = append(whole, chip)
			}
		}
		return devicesOf(resource, whole)
	}
	kind := resource[strings.LastIndex(resource, "/")+1:]
	devices := []*pluginapi.Device{}
	for _, chip := range chips {
		for _, vnpu := range vnpus[chip.LogicID] {
			if name, err := VNPUType(chip.Name, vnpu.Template); err == nil && name == kind {
				health := pluginapi.Unhealthy
				if chip.Healthy {
					health = pluginapi.Healthy
				}
				devices = append(devices, &pluginapi.Device{ID: fmt.Sprintf("%s-%d-%d", kind, vnpu.ID, chip.LogicID), Health: health})
			}
		}
	}
	sort.Slice(devices, func(a, b int) bool { return devices[a].ID < devices[b].ID })
	return devices
}
