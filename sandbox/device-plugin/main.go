// Command device-plugin is the sandbox's stand-in for Huawei's Ascend device plugin.
//
// Huawei's plugin cannot be built here (its module is not served), so this one speaks the same
// kubelet device plugin API (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1) the way Huawei's does:
// it registers huawei.com/Ascend910 or huawei.com/Ascend310P (from the chip npu-smi names) with
// the kubelet, lists one device per chip (ID "<Ascend910>-<logic id>") with its health from
// `npu-smi info -t health`, and answers Allocate with ASCEND_VISIBLE_DEVICES=<logic ids> for the
// Ascend Docker Runtime (-useAscendDocker=true) or with the device nodes themselves (false).
// It takes Huawei's command line (-useAscendDocker, -logFile, -logLevel), so the DaemonSet the
// npu.ascend.device_plugin role renders runs it unchanged.
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
	chip := strings.ToUpper(strings.TrimSpace(name))
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
		number, err := strconv.Atoi(strings.TrimPrefix(id, prefix))
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

	mu      sync.Mutex
	devices []*pluginapi.Device
	changed chan struct{}
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
	return &pluginapi.DevicePluginOptions{}, nil
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
		Options: &pluginapi.DevicePluginOptions{},
	})
	if err != nil {
		server.Stop()
		return nil, fmt.Errorf("registering %s with the kubelet: %w", plugin.Resource, err)
	}
	log.Printf("registered %s with the kubelet (socket %s)", plugin.Resource, socket)
	return server, nil
}

func sameFile(path string, info os.FileInfo) bool {
	current, err := os.Stat(path)
	return err == nil && os.SameFile(current, info)
}

func main() {
	useAscendDocker := flag.Bool("useAscendDocker", true, "containers get their NPUs through the Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES)")
	logFile := flag.String("logFile", "", "also write the log to this file")
	logLevel := flag.Int("logLevel", 0, "accepted for Huawei's command line; this stand-in logs one level")
	npuSmi := flag.String("npuSmi", "npu-smi", "the npu-smi command to list chips and their health")
	directory := flag.String("pluginDir", pluginapi.DevicePluginPath, "the kubelet's device plugin directory")
	interval := flag.Duration("pollInterval", 5*time.Second, "how often npu-smi is asked again")
	showVersion := flag.Bool("version", false, "print the version and exit")
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
	var plugin *Plugin
	for plugin == nil {
		chips, err := inventory.Chips()
		if err == nil && len(chips) == 0 {
			err = errors.New("npu-smi lists no chips")
		}
		if err == nil {
			var resource string
			if resource, err = PublishedResource(*resourceName, chips[0].Name); err == nil {
				plugin = &Plugin{Resource: resource, UseAscendDocker: *useAscendDocker, changed: make(chan struct{}),
					Socket: "Ascend-" + resource[strings.LastIndex(resource, "/")+1:] + ".sock"}
				plugin.SetDevices(devicesOf(resource, chips))
				break
			}
		}
		log.Printf("failed to get card list: %v; retrying in %s", err, *interval)
		time.Sleep(*interval)
	}

	kubeletSocket := filepath.Join(*directory, filepath.Base(pluginapi.KubeletSocket))
	var server *grpc.Server
	var registeredWith os.FileInfo
	for {
		// A restarted kubelet makes a new socket and forgets its plugins: register again.
		if server == nil || registeredWith == nil || !sameFile(kubeletSocket, registeredWith) {
			if server != nil {
				server.Stop()
				server = nil
			}
			if info, err := os.Stat(kubeletSocket); err == nil {
				if server, err = plugin.serve(*directory); err != nil {
					log.Printf("%v; retrying in %s", err, *interval)
				} else {
					registeredWith = info
				}
			} else {
				log.Printf("waiting for the kubelet socket %s", kubeletSocket)
			}
		}
		time.Sleep(*interval)
		chips, err := inventory.Chips()
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
		plugin.SetDevices(devicesOf(plugin.Resource, chips))
	}
}
