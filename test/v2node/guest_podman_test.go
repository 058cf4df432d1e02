// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	nodestate "github.com/containerstats/containerstatsreceiver/internal/node"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// Podman in the v2 guest: Debian 12's podman 4.3 as `apt-get install
// podman` sets it up (crun, conmon, the systemd cgroup manager on a
// systemd host, podman.socket enabled), rootful and rootless, on the
// guest's real cgroup v2 tree. Storage is vfs (the guest's
// /etc/containers/storage.conf, written by the test: the image is a static
// busybox, and the cgroup shapes do not depend on the driver); every
// container runs with --network none (no netavark or slirp4netns).

const (
	podmanImage    = "localhost/containerstats-v2podman:1"
	podmanImageRef = "localhost/containerstats-v2podman"
	// The rootless user: a systemd user session kept by linger.
	rootlessUser = "cstest-rootless"
	rootlessUID  = 1001
	// The allow-list: com.example.tier is kept, com.example.hidden dropped.
	allowedLabel, hiddenLabel = "com.example.tier", "com.example.hidden"
)

// podmanCtr is a running Podman container of the test.
type podmanCtr struct {
	kind   string // plain, pod, unit, rootless, infra
	Name   string
	ID     string
	Tier   string // its com.example.tier label ("": none)
	PID    int
	Conmon int
	Cgroup string // its init process's cgroup (/proc/<pid>/cgroup)
	Image  string // the image reference podman created it from
}

// podmanCLI runs podman as root or, with uid set, as the rootless user in
// its systemd user session.
type podmanCLI struct {
	uid  int
	home string
}

func (p podmanCLI) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// As from a login shell, not from the guest's job unit: with systemd's
	// INVOCATION_ID set, Podman leaves conmon in the caller's unit instead
	// of giving it a libpod-conmon-<id>.scope (libpod's conmon cgroup
	// rule), and the test wants the scope a user's `podman run` makes.
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "INVOCATION_ID=") && !strings.HasPrefix(e, "JOURNAL_STREAM=") {
			c.Env = append(c.Env, e)
		}
	}
	if p.uid != 0 {
		c.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(p.uid), Gid: uint32(p.uid)}
		run := fmt.Sprintf("/run/user/%d", p.uid)
		c.Env = []string{
			"HOME=" + p.home, "USER=" + rootlessUser, "LOGNAME=" + rootlessUser,
			"PATH=/usr/local/bin:/usr/bin:/bin", "XDG_RUNTIME_DIR=" + run,
			"DBUS_SESSION_BUS_ADDRESS=unix:path=" + run + "/bus",
		}
		c.Dir = p.home
	}
	return c
}

// run runs a command as p's user with stdin from in (nil: none) and a
// two-minute limit; its standard output, or an error with its standard
// error.
func (p podmanCLI) run(in []byte, name string, args ...string) (string, error) {
	c := p.cmd(name, args...)
	if in != nil {
		c.Stdin = bytes.NewReader(in)
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return stdout.String(), fmt.Errorf("%s %s (uid %d): %w: %s", name, strings.Join(args, " "), p.uid, err, stderr.Bytes())
		}
	case <-time.After(2 * time.Minute):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done //nolint:errcheck // killed: its exit error says only that
		return stdout.String(), fmt.Errorf("%s %s (uid %d): no answer within 2 min: %s", name, strings.Join(args, " "), p.uid, stderr.Bytes())
	}
	return strings.TrimSpace(stdout.String()), nil
}

func (p podmanCLI) podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := p.run(nil, "podman", args...)
	require.NoError(t, err)
	return out
}

// inspect fills the container's PID, conmon PID, cgroup and image.
func (p podmanCLI) inspect(t *testing.T, c *podmanCtr) {
	t.Helper()
	out := p.podman(t, "inspect", "--format", "{{.State.Pid}} {{.State.ConmonPid}} {{.Name}} {{.ImageName}}", c.ID)
	var name string
	_, err := fmt.Sscan(out, &c.PID, &c.Conmon, &name, &c.Image)
	require.NoError(t, err, "podman inspect: %q", out)
	require.Positive(t, c.PID, "container %s does not run", c.ID)
	if c.Name == "" {
		c.Name = name
	}
	require.Equal(t, c.Name, name)
	c.Cgroup = procCgroup(t, c.PID)
}

// procCgroup is the cgroup v2 path of a process ("0::<path>").
func procCgroup(t *testing.T, pid int) string {
	t.Helper()
	for _, line := range strings.Split(readFile(t, fmt.Sprintf("/proc/%d/cgroup", pid)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p
		}
	}
	t.Fatalf("/proc/%d/cgroup: no v2 line", pid)
	return ""
}

// runPodman starts a detached container with the allowed and the hidden
// label running cmd (none: a sleep), and returns it once podman says it
// runs.
func (p podmanCLI) runPodman(t *testing.T, kind, name, tier string, extra []string, cmd ...string) *podmanCtr {
	t.Helper()
	args := append([]string{
		"run", "-d", "--name", name, "--network", "none",
		"--label", allowedLabel + "=" + tier, "--label", hiddenLabel + "=x",
	}, extra...)
	if len(cmd) == 0 {
		cmd = []string{"sleep", "3600"}
	}
	args = append(append(args, podmanImage), cmd...)
	c := &podmanCtr{kind: kind, Name: name, Tier: tier, ID: p.podman(t, args...)}
	require.True(t, cgroupfs.IsHex64(c.ID), "podman run printed %q", c.ID)
	p.inspect(t, c)
	return c
}

// shape is a cgroup path with container and pod IDs and the rootless UID
// written as placeholders.
func shape(p string) string {
	p = regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAllString(p, "<id>")
	return strings.ReplaceAll(p, strconv.Itoa(rootlessUID), "<uid>")
}

// TestPodman: containers of real Podman on the guest's systemd are found by
// the standalone walk and named through Podman's Docker-compatible API,
// both sockets auto-detected under the root as the receiver's defaults
// detect them: rootful (podman.socket at /run/podman/podman.sock) a plain
// container (machine.slice/libpod-<id>.scope), two members of a pod
// (machine.slice/machine-libpod_pod_<pod>.slice/libpod-<id>.scope) and the
// pod's infra container, a container of a `podman generate systemd --new`
// unit (Podman 4.3 has no Quadlet, which came with 4.4), and rootless (a
// user with linger: user@<uid>.service; its podman.socket at
// /run/user/<uid>/podman/podman.sock) one container. Each has exactly one
// series (conmon's scopes, Podman's own scopes and the pod slices none)
// with its name, image, the allowed label only and runtime podman; the
// cgroup shapes Podman made are written to podman-cgroups.txt; one
// container's CPU time and working set lie between the kernel's reads
// around the scrape.
func TestPodman(t *testing.T) {
	machine.Lock(t)
	if _, err := exec.LookPath("podman"); err != nil {
		machine.Need(t, "podman is not in the guest image (vmnode.Packages)")
	}
	root := podmanCLI{}
	t0 := time.Now()
	lap := func(what string) {
		t.Logf("%s: %.1f s", what, time.Since(t0).Seconds())
		t0 = time.Now()
	}
	// vfs for root and the rootless user (rootless Podman reads the
	// driver from here too); the guest's root is a throw-away snapshot,
	// the file is removed all the same.
	const storageConf = "/etc/containers/storage.conf"
	require.NoFileExists(t, storageConf, "the guest image has no storage.conf of its own")
	require.NoError(t, os.WriteFile(storageConf, []byte("[storage]\ndriver = \"vfs\"\nrunroot = \"/run/containers/storage\"\ngraphroot = \"/var/lib/containers/storage\"\n"), 0o644)) //nolint:gosec // G306: world-readable, as rootless podman reads it
	t.Cleanup(func() { _ = os.Remove(storageConf) })
	info := root.podman(t, "info", "--format", "{{.Host.CgroupManager}} {{.Host.CgroupsVersion}} {{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}} {{.Version.Version}}")
	t.Logf("rootful podman: cgroup manager, cgroups, runtime, storage, version: %s", info)
	require.True(t, strings.HasPrefix(info, "systemd v2 "), "Podman's defaults on a systemd v2 host: %s", info)
	require.FileExists(t, "/run/podman/podman.sock", "podman.socket, enabled by Debian's package")

	dir := t.TempDir()
	archive, err := machine.BusyboxTar(dir, "sh", "sleep")
	require.NoError(t, err)
	_, err = root.run(archive, "podman", "import", "-", podmanImage)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, args := range [][]string{{"pod", "rm", "--all", "--force"}, {"rm", "--all", "--force", "--time", "0"}, {"rmi", "--all", "--force"}} {
			if _, err := root.run(nil, "podman", args...); err != nil {
				t.Error(err)
			}
		}
	})

	// Every container but the infra holds its own amount of memory and
	// CPU time (holdScript): 2 to 32 MiB, each twice the next smaller.
	require.NoError(t, os.WriteFile(holdScript, []byte(holdText), 0o644)) //nolint:gosec // G306: world-readable, as rootless podman mounts it
	t.Cleanup(func() { _ = os.Remove(holdScript) })
	var all []*podmanCtr
	// A plain container.
	all = append(all, root.runPodman(t, "plain", "v2-plain", "gold", holdMount, hold(8, 20000)...))
	// A pod of two, and its infra container.
	podID := root.podman(t, "pod", "create", "--name", "v2-pod", "--network", "none")
	all = append(all, root.runPodman(t, "pod", "v2-pod-a", "silver", append([]string{"--pod", "v2-pod"}, holdMount...), hold(2, 1000)...))
	all = append(all, root.runPodman(t, "pod", "v2-pod-b", "bronze", append([]string{"--pod", "v2-pod"}, holdMount...), hold(4, 3000)...))
	infra := &podmanCtr{kind: "infra", ID: root.podman(t, "pod", "inspect", "--format", "{{.InfraContainerID}}", podID)}
	root.inspect(t, infra)
	all = append(all, infra)
	lap("rootful: image, a container, a pod of two")
	// A container of a systemd unit, as `podman generate systemd --new`
	// writes it (`podman run --cgroups=no-conmon --rm --sdnotify=conmon
	// --replace ...`), started by systemd.
	all = append(all, startUnitContainer(t, root))
	lap("the unit's container")
	// Rootless, in the user's systemd session.
	all = append(all, startRootless(t, archive))
	lap("rootless: user session, image, a container")

	// The cgroups Podman made: each container's, conmon's, and every
	// cgroup of the tree named by Podman.
	var seen []string
	for _, c := range all {
		seen = append(seen, fmt.Sprintf("%s container: %s", c.kind, shape(c.Cgroup)))
		if c.Conmon > 0 {
			seen = append(seen, fmt.Sprintf("%s conmon: %s", c.kind, shape(procCgroup(t, c.Conmon))))
		}
	}
	require.NoError(t, filepath.WalkDir(cgRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil //nolint:nilerr // a cgroup that vanished during the walk
		}
		if rel := strings.TrimPrefix(p, cgRoot); strings.Contains(rel, "libpod") || strings.Contains(rel, "podman") || strings.Contains(rel, "container-v2-unit") {
			seen = append(seen, "tree: "+shape(rel))
		}
		return nil
	}))
	sort.Strings(seen)
	seen = slices.Compact(seen)
	t.Logf("cgroups of real Podman:\n%s", strings.Join(seen, "\n"))
	writeResult(t, "podman-cgroups.txt", []byte(strings.Join(seen, "\n")+"\n"))

	// Each container's cgroup is the shape the receiver knows, and names
	// the container itself.
	wantShape := map[string]*regexp.Regexp{
		"plain":    regexp.MustCompile(`^/machine\.slice/libpod-<id>\.scope(/container)?$`),
		"pod":      regexp.MustCompile(`^/machine\.slice/machine-libpod_pod_<id>\.slice/libpod-<id>\.scope(/container)?$`),
		"infra":    regexp.MustCompile(`^/machine\.slice/machine-libpod_pod_<id>\.slice/libpod-<id>\.scope(/container)?$`),
		"unit":     regexp.MustCompile(`^/machine\.slice/libpod-<id>\.scope(/container)?$`),
		"rootless": regexp.MustCompile(`^/user\.slice/user-<uid>\.slice/user@<uid>\.service/user\.slice/libpod-<id>\.scope(/container)?$`),
	}
	for _, c := range all {
		if c.Conmon > 0 {
			// conmon's scope (libpod-conmon-<id>.scope) or the unit's
			// service: never a container.
			p := procCgroup(t, c.Conmon)
			cg, ok := cgroupfs.ParsePath(p)
			assert.False(t, ok && cg.Kind == cgroupfs.KindContainer, "%s container %s: its conmon's cgroup %s parsed as container %s", c.kind, c.Name, p, cg.ContainerID)
		}
		assert.Regexp(t, wantShape[c.kind], shape(c.Cgroup), "%s container %s: its cgroup", c.kind, c.Name)
		cg, ok := cgroupfs.ParsePath(c.Cgroup)
		if assert.True(t, ok, "%s: not a container's cgroup", c.Cgroup) {
			assert.Equal(t, c.ID, cg.ContainerID, "%s: the container named by its cgroup", c.Cgroup)
			assert.Equal(t, cgroupfs.RuntimePodman, cg.Runtime, c.Cgroup)
		}
	}

	// The receiver as its defaults run it, with standalone containers on
	// and the one allowed label: every runtime on, every socket
	// auto-detected under the root (here Podman's two: CRI and containerd
	// have none in this guest).
	set := receivertest.NewNopSettings(metadata.Type)
	st := nodestate.New(nodestate.Config{
		Host: nodestate.HostConfig{Root: "/", Standalone: true, Runtimes: nodestate.Runtimes{CRI: true, Containerd: true, Docker: true}},
		Identity: nodestate.IdentityConfig{
			ContainerdNamespaces: []string{"k8s.io", "moby"}, ContainerLabels: []string{allowedLabel}, PodLogs: true,
			// runtime.timeout is 2 s; a socket-activated Podman API service's
			// first answer under TCG takes longer.
			Timeout: 30 * time.Second, RefreshInterval: 30 * time.Second, MinRefresh: 100 * time.Millisecond,
		},
	}, set.Logger)
	s := scrape.New(set, scrape.Options{
		Host: st.Host, NodeName: nodeName, StandaloneContainers: true, MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Identity: st.Identity,
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	var own []string
	for _, c := range all {
		own = append(own, c.ID)
	}
	// The first scrapes may leave a container out until the listing that
	// names it arrives (docs/identity.md, "Caching and calls"): wait for
	// all of them, bounded.
	var m pmetric.Metrics
	scrapes := 0
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		scrapes++
		m = scrapeOwn(t, s, own...)
		var missing []string
		for _, c := range all {
			if resource(m, "container.id", c.ID) == nil {
				missing = append(missing, c.kind+" "+c.Name)
			}
		}
		if len(missing) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "after %d scrapes, not reported: %v", scrapes, missing)
	}
	lap(fmt.Sprintf("every container reported, at scrape %d", scrapes))

	// Each container's CPU time and working set against the kernel's
	// files of its cgroup (the scope: the receiver reads the container's
	// own cgroup, its crun "container" child included), read around the
	// scrape by the test itself: usage_usec of cpu.stat, memory.current
	// less memory.stat's inactive_file. Every other container's figure
	// fails each row (sidebyside): the workloads differ by more than 4×
	// the tolerance (1 µs: the kernel's unit; 256 KiB).
	for _, c := range all {
		if c.kind == "infra" {
			continue
		}
		require.Eventually(t, func() bool { _, err := os.Stat(fmt.Sprintf("/proc/%d/root/held", c.PID)); return err == nil }, 3*time.Minute, 200*time.Millisecond,
			"%s container %s never held its memory", c.kind, c.Name)
	}
	lap("every container holds its memory")
	type kernelRead struct{ cpu0, cpu1, ws0, ws1 float64 }
	reads := make([]kernelRead, len(all))
	scopes := make([]string, len(all))
	for i, c := range all {
		cg, _ := cgroupfs.ParsePath(c.Cgroup)
		scopes[i] = filepath.Join(cgRoot, cg.Path)
		reads[i].cpu0, reads[i].ws0 = float64(keyed(t, filepath.Join(scopes[i], "cpu.stat"))["usage_usec"])/1e6, kernelWS(t, scopes[i])
	}
	m = scrapeOwn(t, s, own...)
	for i := range all {
		reads[i].cpu1, reads[i].ws1 = float64(keyed(t, filepath.Join(scopes[i], "cpu.stat"))["usage_usec"])/1e6, kernelWS(t, scopes[i])
	}
	var rows []sidebyside.Row
	for i, c := range all {
		pv := values(m, "container.id", c.ID)
		r := reads[i]
		entity := c.kind + " " + c.Name
		cpu := pv["container.cpu.time/user"] + pv["container.cpu.time/system"]
		rows = append(rows, kernelRow("CPU time (s)", entity, cpu, r.cpu0, r.cpu1, 1e-6, "s"),
			kernelRow("working set (B)", entity, pv["container.memory.working_set"], r.ws0, r.ws1, 256<<10, "B"))
		if c.kind == "infra" {
			// Podman's pause process: a figure the others' rows must fail, too
			// small to compare by itself.
			rows[len(rows)-1].NoFloor = "the pod's infra (pause) container holds no memory of its own; here so that the others' rows fail its figure"
		}
	}
	sidebyside.Require(t, "TestPodman, ours against the kernel's files around the scrape", rows, sidebyside.Options{Apart: 4, MinRows: 2 * len(all)})

	// One series per container, named through the API.
	for _, c := range all {
		n := 0
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			if v, ok := m.ResourceMetrics().At(i).Resource().Attributes().Get("container.id"); ok && v.Str() == c.ID {
				n++
			}
		}
		assert.Equal(t, 1, n, "%s container %s (%s): series", c.kind, c.Name, shape(c.Cgroup))
		got := resource(m, "container.id", c.ID)
		if c.kind == "infra" {
			// Podman names it <pod ID prefix>-infra, from its pause image.
			name, _ := splitRef(c.Image)
			if assert.NotNil(t, got) {
				assert.Equal(t, c.Name, got["container.name"], "the pod's infra container")
				assert.Equal(t, name, got["container.image.name"], "the pod's infra container")
				assert.Equal(t, "podman", got["container.runtime.name"])
			}
			continue
		}
		want := map[string]any{
			"container.id": c.ID, "container.name": c.Name, "container.runtime.name": "podman",
			"container.image.name": podmanImageRef, "container.image.tags": []any{"1"},
			"container.label." + allowedLabel: c.Tier, "k8s.node.name": nodeName,
		}
		assert.Equal(t, want, got, "%s container %s: its resource", c.kind, c.Name)
	}
	// Nothing else is a Podman container: no conmon scope, no pod slice,
	// no scope of Podman's own (the guest runs no other Podman container).
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		a := m.ResourceMetrics().At(i).Resource().Attributes()
		if rt, ok := a.Get("container.runtime.name"); ok && rt.Str() == "podman" {
			id, _ := a.Get("container.id")
			assert.Contains(t, own, id.Str(), "a Podman series that is none of the test's containers: %v", a.AsRaw())
		}
	}
}

// splitRef splits an image reference into its name and tag.
func splitRef(ref string) (name, tag string) {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// startUnitContainer makes a container, has `podman generate systemd
// --new` write its unit, removes the container and starts the unit, whose
// container replaces it; the unit is stopped and removed in t.Cleanup.
func startUnitContainer(t *testing.T, root podmanCLI) *podmanCtr {
	t.Helper()
	const name, unit = "v2-unit", "container-v2-unit.service"
	args := append([]string{"create", "--name", name, "--network", "none", "--label", allowedLabel + "=steel", "--label", hiddenLabel + "=x"}, holdMount...)
	root.podman(t, append(append(args, podmanImage), hold(32, 10000)...)...)
	text := root.podman(t, "generate", "systemd", "--new", "--name", name)
	root.podman(t, "rm", name)
	path := filepath.Join("/etc/systemd/system", unit)
	require.NoError(t, os.WriteFile(path, []byte(text+"\n"), 0o600))
	t.Cleanup(func() {
		if _, err := root.run(nil, "systemctl", "stop", unit); err != nil {
			t.Error(err)
		}
		_ = os.Remove(path)
		_, _ = root.run(nil, "systemctl", "daemon-reload")
	})
	for _, args := range [][]string{{"daemon-reload"}, {"start", unit}} {
		_, err := root.run(nil, "systemctl", args...)
		require.NoError(t, err)
	}
	// ExecStart= with its continuation lines, as one line.
	if _, start, ok := strings.Cut(text, "\nExecStart="); ok {
		cmd, _, _ := strings.Cut(strings.ReplaceAll(start, "\\\n", " "), "\n")
		t.Logf("%s: ExecStart=%s", unit, strings.Join(strings.Fields(cmd), " "))
	}
	id, err := os.ReadFile("/run/" + unit + ".ctr-id")
	require.NoError(t, err, "the unit's --cidfile")
	c := &podmanCtr{kind: "unit", Name: name, Tier: "steel", ID: strings.TrimSpace(string(id))}
	root.inspect(t, c)
	return c
}

// startRootless makes the rootless user with subordinate IDs, gives it a
// systemd user session by linger, imports the image into its storage,
// starts its podman.socket and one container. All of it is undone in
// t.Cleanup: the user's containers, image and units, linger, the user.
func startRootless(t *testing.T, archive []byte) *podmanCtr {
	t.Helper()
	root := podmanCLI{}
	home := filepath.Join("/home", rootlessUser)
	uid := strconv.Itoa(rootlessUID)
	_, err := root.run(nil, "useradd", "--create-home", "--home-dir", home, "--uid", uid, "--user-group", "--shell", "/bin/sh", rootlessUser)
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, runErr := root.run(nil, "userdel", "--remove", rootlessUser); runErr != nil {
			t.Logf("userdel: %v", runErr)
		}
	})
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		b, _ := os.ReadFile(f)
		if !bytes.Contains(b, []byte(rootlessUser+":")) {
			b = append(b, []byte(rootlessUser+":200000:65536\n")...)
			require.NoError(t, os.WriteFile(f, b, 0o644)) //nolint:gosec // G306: world-readable, as rootless podman reads it
		}
	}
	_, err = root.run(nil, "loginctl", "enable-linger", rootlessUser)
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, runErr := root.run(nil, "loginctl", "disable-linger", rootlessUser); runErr != nil {
			t.Error(runErr)
		}
		if _, runErr := root.run(nil, "systemctl", "stop", "user@"+uid+".service"); runErr != nil {
			t.Error(runErr)
		}
	})
	bus := fmt.Sprintf("/run/user/%d/bus", rootlessUID)
	require.Eventually(t, func() bool {
		out, _ := root.run(nil, "systemctl", "is-active", "user@"+uid+".service")
		_, statErr := os.Stat(bus)
		return out == "active" && statErr == nil
	}, 2*time.Minute, 200*time.Millisecond, "user@%s.service and the user's bus %s never came", uid, bus)

	user := podmanCLI{uid: rootlessUID, home: home}
	info := user.podman(t, "info", "--format", "{{.Host.CgroupManager}} {{.Host.Security.Rootless}} {{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}")
	t.Logf("rootless podman: cgroup manager, rootless, runtime, storage: %s", info)
	require.True(t, strings.HasPrefix(info, "systemd true "), "rootless Podman with the user's systemd: %s", info)
	_, err = user.run(archive, "podman", "import", "-", podmanImage)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, args := range [][]string{{"podman", "rm", "--all", "--force", "--time", "0"}, {"podman", "rmi", "--all", "--force"}, {"systemctl", "--user", "stop", "podman.socket", "podman.service"}} {
			if _, runErr := user.run(nil, args[0], args[1:]...); runErr != nil {
				t.Error(runErr)
			}
		}
	})
	_, err = user.run(nil, "systemctl", "--user", "start", "podman.socket")
	require.NoError(t, err)
	sock := fmt.Sprintf("/run/user/%d/podman/podman.sock", rootlessUID)
	require.FileExists(t, sock, "the rootless user's podman.socket")
	return user.runPodman(t, "rootless", "v2-rootless", "tin", holdMount, hold(16, 6000)...)
}

// holdScript is the script every container of TestPodman but the infra
// runs (holdMount mounts it, hold is its command line): it holds $1 KiB
// in a shell variable (doubled from 16 bytes, so a power of two), counts
// to $2 (CPU time), creates /held and sleeps on, the variable held.
const holdScript = "/run/cstest-podman-hold.sh"

const holdText = `s=0123456789abcdef
while [ ${#s} -lt $(($1 * 1024)) ]; do s=$s$s; done
i=0
while [ $i -lt $2 ]; do i=$((i+1)); done
: > /held
while :; do sleep 3600; done
`

var holdMount = []string{"-v", holdScript + ":/hold.sh:ro"}

// hold is the command of a container holding mib MiB and counting to n.
func hold(mib, n int) []string {
	return []string{"sh", "/hold.sh", strconv.Itoa(mib << 10), strconv.Itoa(n)}
}

// kernelWS is a cgroup's working set as the test reads it from the
// kernel's files: memory.current less memory.stat's inactive_file (0
// where that is more).
func kernelWS(t *testing.T, dir string) float64 {
	t.Helper()
	return float64(readMem(t, dir).ws())
}

// kernelRow is a sidebyside row of ours against the kernel's reads a
// (before the scrape, the row's reference) and b (after): ours passes a
// figure v when it lies between v and v + (b − a), widened by tol.
func kernelRow(quantity, entity string, ours, a, b, tol float64, unit string) sidebyside.Row {
	d := b - a
	return sidebyside.Row{
		Quantity: quantity, Entity: entity, Ref: a, Tol: tol, Ours: ours, Unit: unit,
		Pass:  func(v float64) bool { return ours >= min(v, v+d)-tol && ours <= max(v, v+d)+tol },
		Shown: fmt.Sprintf("%s (kernel after: %s)", showBounds(ours, ours, unit), showBounds(b, b, unit)),
	}
}
