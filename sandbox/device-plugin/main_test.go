package main

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

const infoM910 = `        NPU ID                         Chip ID                        Chip Logic ID                  Chip Name
        0                              0                              0                              Ascend 910B4
        0                              1                              -                              Mcu
        1                              0                              1                              Ascend 910B4
        1                              1                              -                              Mcu
`

const infoM310P = `NPU ID       Chip ID       Chip Logic ID       Chip Name
1            0             0                   Ascend 310P3
1            1             1                   Ascend 310P3
1            2             -                   Mcu
2            0             2                   Ascend 310P3
`

func TestParseChipMap(t *testing.T) {
	chips, err := ParseChipMap(infoM910)
	if err != nil || len(chips) != 2 || chips[1] != (Chip{NPU: 1, Chip: 0, LogicID: 1, Name: "910B4"}) {
		t.Fatalf("910: %+v %v", chips, err)
	}
	chips, err = ParseChipMap(infoM310P)
	if err != nil || len(chips) != 3 || chips[1].Chip != 1 || chips[1].LogicID != 1 || chips[2].LogicID != 2 {
		t.Fatalf("310P: %+v %v", chips, err)
	}
	if _, err := ParseChipMap("dcmi module initialize failed. ret is -8005\n"); err == nil {
		t.Fatal("an error text was read as a chip table")
	}
	if _, err := ParseChipMap("NPU ID Chip ID Chip Logic ID Chip Name\nx 0 0 Ascend 910B4\n"); err == nil {
		t.Fatal("a row without numbers was accepted")
	}
}

// A3 (MindCluster's fault-diag docstring layout): a Chip Phy-ID column, dies 0 and 1, the MCU as chip 2.
const infoMA3 = `        NPU ID                         Chip ID                        Chip Logic ID                  Chip Phy-ID                    Chip Name
        0                              0                              0                              0                              Ascend910
        0                              1                              1                              1                              Ascend910
        0                              2                              -                              -                              Mcu
        1                              0                              2                              2                              Ascend910
        1                              1                              3                              3                              Ascend910
        1                              2                              -                              -                              Mcu
`

func TestA3DiesArePublishedAsAscend910AndPreferredInPairs(t *testing.T) {
	chips, err := ParseChipMap(infoMA3)
	if err != nil || len(chips) != 4 || chips[3] != (Chip{NPU: 1, Chip: 1, LogicID: 3, Name: "Ascend910"}) {
		t.Fatalf("A3: %+v %v", chips, err)
	}
	resource, err := ResourceForChip(chips[0].Name)
	if err != nil || resource != "huawei.com/Ascend910" {
		t.Fatalf("A3 resource: %q %v", resource, err)
	}
	npuOf := MultiDieNPUs(resource, chips)
	if len(npuOf) != 4 || npuOf["Ascend910-2"] != 1 {
		t.Fatalf("A3 NPUs of the dies: %v", npuOf)
	}
	// NPU 0's die 0 is taken: a pair must come from NPU 1, not the free die of NPU 0.
	if got := PreferredDevices([]string{"Ascend910-1", "Ascend910-2", "Ascend910-3"}, nil, 2, npuOf); !reflect.DeepEqual(got, []string{"Ascend910-2", "Ascend910-3"}) {
		t.Errorf("pair: %v", got)
	}
	// One die: whole NPUs are kept for pairs while a lone die is free.
	if got := PreferredDevices([]string{"Ascend910-1", "Ascend910-2", "Ascend910-3"}, nil, 1, npuOf); !reflect.DeepEqual(got, []string{"Ascend910-1"}) {
		t.Errorf("single die: %v", got)
	}
	if got := PreferredDevices([]string{"Ascend910-0", "Ascend910-1", "Ascend910-2", "Ascend910-3"}, []string{"Ascend910-3"}, 2, npuOf); !reflect.DeepEqual(got, []string{"Ascend910-3", "Ascend910-2"}) {
		t.Errorf("must include: %v", got)
	}
	if got := PreferredDevices([]string{"Ascend910-0"}, nil, 2, npuOf); got != nil {
		t.Errorf("short: %v", got)
	}
	// An A2 (one chip per NPU) and a 310P Duo (two chips of Ascend310P) prefer nothing.
	if MultiDieNPUs("huawei.com/Ascend910", []Chip{{NPU: 0, LogicID: 0}, {NPU: 1, LogicID: 1}}) != nil {
		t.Error("A2 chips were taken for dies")
	}
	if MultiDieNPUs("huawei.com/Ascend310P", []Chip{{NPU: 1, Chip: 0, LogicID: 0}, {NPU: 1, Chip: 1, LogicID: 1}}) != nil {
		t.Error("a Duo card was taken for an A3 module")
	}
	plugin := &Plugin{Resource: resource, NPUOf: npuOf, changed: make(chan struct{})}
	if options, _ := plugin.GetDevicePluginOptions(context.Background(), &pluginapi.Empty{}); !options.GetPreferredAllocationAvailable {
		t.Error("the A3 plugin does not offer preferred allocations")
	}
}

func TestARecreatedSocketIsNotTheSameFile(t *testing.T) {
	path := t.TempDir() + "/kubelet.sock"
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Stat(path)
	if !sameFile(path, first) {
		t.Fatal("the socket is not the same file as itself")
	}
	// Same inode (the file is kept), new times: as a socket re-created on a freed inode number.
	later := first.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if sameFile(path, first) {
		t.Error("a socket made again on the same inode was taken for the old one")
	}
	if err := os.Remove(path); err != nil || sameFile(path, first) {
		t.Errorf("a removed socket was taken for the old one (%v)", err)
	}
}

func TestParseHealth(t *testing.T) {
	status, err := ParseHealth("Health Status                  : Warning\nError Code  : 80E18005\n")
	if err != nil || status != "Warning" {
		t.Fatalf("%q %v", status, err)
	}
	if _, err := ParseHealth("nothing"); err == nil {
		t.Fatal("no error without a Health Status line")
	}
}

func TestResourceForChip(t *testing.T) {
	for chip, want := range map[string]string{"910B4": "huawei.com/Ascend910", "910": "huawei.com/Ascend910",
		"310P3": "huawei.com/Ascend310P", "310": "huawei.com/Ascend310", "Ascend910": "huawei.com/Ascend910"} {
		if got, err := ResourceForChip(chip); err != nil || got != want {
			t.Errorf("%s: %s %v", chip, got, err)
		}
	}
	if _, err := ResourceForChip("Mcu"); err == nil {
		t.Error("an MCU got a resource")
	}
}

func TestPublishedResource(t *testing.T) {
	for _, test := range []struct{ override, chip, want string }{
		{"", "310P3", "huawei.com/Ascend310P"},
		{"aliyun.com/npu", "310P3", "aliyun.com/npu"},
	} {
		if got, err := PublishedResource(test.override, test.chip); err != nil || got != test.want {
			t.Errorf("PublishedResource(%q, %q) = %q, %v; want %q", test.override, test.chip, got, err, test.want)
		}
	}
	if _, err := PublishedResource("npu", "310P3"); err == nil {
		t.Errorf("PublishedResource accepted a resource name without a vendor")
	}
}

func TestAllocateNamesExactlyTheAllocatedChips(t *testing.T) {
	plugin := &Plugin{Resource: "huawei.com/Ascend910", UseAscendDocker: true, changed: make(chan struct{})}
	response, err := plugin.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"Ascend910-5", "Ascend910-3"}}, {DevicesIds: []string{"Ascend910-0"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := response.ContainerResponses[0].Envs["ASCEND_VISIBLE_DEVICES"]; got != "3,5" {
		t.Errorf("first container: %q", got)
	}
	if got := response.ContainerResponses[1].Envs["ASCEND_VISIBLE_DEVICES"]; got != "0" {
		t.Errorf("second container: %q", got)
	}
	if len(response.ContainerResponses[0].Devices) != 0 {
		t.Error("device nodes handed over although the Ascend Docker Runtime injects them")
	}
	if _, err := plugin.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"Ascend310P-1"}}}}); err == nil {
		t.Error("a device of another resource was allocated")
	}
}

func TestAllocateWithoutAscendDockerHandsOverTheDeviceNodes(t *testing.T) {
	plugin := &Plugin{Resource: "huawei.com/Ascend310P", changed: make(chan struct{})}
	response, err := plugin.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"Ascend310P-1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, device := range response.ContainerResponses[0].Devices {
		paths = append(paths, device.HostPath)
	}
	want := []string{"/dev/davinci1", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}
	if len(paths) != len(want) {
		t.Fatalf("%v", paths)
	}
	for index := range want {
		if paths[index] != want[index] {
			t.Fatalf("%v", paths)
		}
	}
}

func TestDevicesCarryHealth(t *testing.T) {
	devices := devicesOf("huawei.com/Ascend910", []Chip{{LogicID: 1, Healthy: false}, {LogicID: 0, Healthy: true}})
	if devices[0].ID != "Ascend910-0" || devices[0].Health != pluginapi.Healthy || devices[1].Health != pluginapi.Unhealthy {
		t.Fatalf("%+v", devices)
	}
}

const infoVNPU310P = `+-------------------------------------------------------------------------------+
| Total number of vnpu: 2                                                       |
+-------------------------------------------------------------------------------+
|  Vnpu ID  |  Vgroup ID     |  Container ID  |  Status  |  Template Name       |
+-------------------------------------------------------------------------------+
|  100      |  0             |  000000000000  |  0       |  vir02               |
+-------------------------------------------------------------------------------+
|  101      |  1             |  000000000000  |  0       |  vir04_3c_ndvpp      |
+-------------------------------------------------------------------------------+
`

func TestParseVNPUs(t *testing.T) {
	vnpus, err := ParseVNPUs(infoVNPU310P)
	if err != nil || len(vnpus) != 2 || vnpus[1] != (VNPU{ID: 101, Template: "vir04_3c_ndvpp"}) {
		t.Fatalf("%+v %v", vnpus, err)
	}
	if _, err := ParseVNPUs("The input parameter -i is invalid.\n"); err == nil {
		t.Fatal("an error text was read as a vNPU table")
	}
}

func TestVNPUType(t *testing.T) {
	for _, test := range []struct{ chip, template, want string }{
		{"310P3", "vir02", "Ascend310P-2c"}, {"310P3", "vir02_1c", "Ascend310P-2c.1cpu"},
		{"310P3", "vir04_4c_dvpp", "Ascend310P-4c.4cpu.dvpp"}, {"910B4", "vir10_3c_16g_nm", "Ascend910-10c.3cpu.16g.ndvpp"},
		{"910B4", "vir05_1c_8g", "Ascend910-5c.1cpu.8g"}, {"910B1", "vir06_1c_16g", "Ascend910-6c.1cpu.16g"},
	} {
		if got, err := VNPUType(test.chip, test.template); err != nil || got != test.want {
			t.Errorf("VNPUType(%q, %q) = %q, %v; want %q", test.chip, test.template, got, err, test.want)
		}
	}
	if _, err := VNPUType("310P3", "whole"); err == nil {
		t.Error("a non-template got a type")
	}
}

func TestVNPUsArePublishedInsteadOfTheirChip(t *testing.T) {
	chips := []Chip{{NPU: 1, Chip: 0, LogicID: 0, Name: "310P3", Healthy: true}, {NPU: 1, Chip: 1, LogicID: 1, Name: "310P3", Healthy: true}}
	vnpus := map[int][]VNPU{0: {{ID: 100, Template: "vir02"}, {ID: 101, Template: "vir02"}}}
	resources := ResourcesOf("huawei.com/Ascend310P", chips, vnpus)
	if len(resources) != 2 || resources[0] != "huawei.com/Ascend310P" || resources[1] != "huawei.com/Ascend310P-2c" {
		t.Fatalf("%v", resources)
	}
	whole := DevicesFor("huawei.com/Ascend310P", "huawei.com/Ascend310P", chips, vnpus)
	if len(whole) != 1 || whole[0].ID != "Ascend310P-1" {
		t.Fatalf("whole chips: %+v", whole)
	}
	split := DevicesFor("huawei.com/Ascend310P-2c", "huawei.com/Ascend310P", chips, vnpus)
	if len(split) != 2 || split[0].ID != "Ascend310P-2c-100-0" || split[1].ID != "Ascend310P-2c-101-0" {
		t.Fatalf("vNPUs: %+v", split)
	}
	plugin := &Plugin{Resource: "huawei.com/Ascend310P-2c", UseAscendDocker: true, changed: make(chan struct{})}
	response, err := plugin.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"Ascend310P-2c-101-0"}}}})
	if err != nil || response.ContainerResponses[0].Envs["ASCEND_VISIBLE_DEVICES"] != "101" {
		t.Fatalf("%+v %v", response, err)
	}
}
