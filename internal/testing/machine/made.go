// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package machine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// CgroupDirs is rel in every cgroup hierarchy of the machine (the unified
// tree and each v1 one): where a runtime a harness starts makes its
// parent cgroup.
func CgroupDirs(rel string) []string {
	dirs := []string{filepath.Join("/sys/fs/cgroup", rel)}
	hs, _ := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs") // the pattern is valid: no error
	for _, h := range hs {
		dirs = append(dirs, filepath.Join(filepath.Dir(h), rel))
	}
	return dirs
}

// Absent returns, in order, the paths that do not exist now: what a test
// will have made, and its cleanup removes (RemoveWhenEmpty). A path that
// existed before the test is the machine's, never removed.
func Absent(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			out = append(out, p)
		}
	}
	return out
}

// RemoveWhenEmpty removes path (a cgroup directory, once the processes in
// it have gone, an empty directory or a file), retrying for five seconds;
// a path that is already gone is fine.
func RemoveWhenEmpty(path string) error {
	var err error
	for range 50 {
		err = os.Remove(path)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("remove %s: %w", path, err)
}

// BusyboxTar makes a root filesystem of the machine's static busybox
// (Debian's busybox-static, /bin/busybox) with applets linked to it in
// dir/rootfs, and returns it as a tar archive: a local image for
// `docker import` or `podman import`, no registry needed.
func BusyboxTar(dir string, applets ...string) ([]byte, error) {
	return BusyboxTarWith(dir, nil, applets...)
}

// BusyboxTarWith is BusyboxTar with more executables in the image: files
// maps a path in the image ("bin/workload") to the host file copied there
// (a static binary: internal/testing/cmd/workload built CGO_ENABLED=0).
func BusyboxTarWith(dir string, files map[string]string, applets ...string) ([]byte, error) {
	rootfs := filepath.Join(dir, "rootfs")
	bin := filepath.Join(rootfs, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	copies := map[string]string{"bin/busybox": "/bin/busybox"}
	for in, host := range files {
		copies[in] = host
	}
	for in, host := range copies {
		data, err := os.ReadFile(host) //nolint:gosec // G304: a test tool: a file of the test's own
		if err != nil {
			return nil, err
		}
		path := filepath.Join(rootfs, in)
		if mkErr := os.MkdirAll(filepath.Dir(path), 0o755); mkErr != nil {
			return nil, mkErr
		}
		if writeErr := os.WriteFile(path, data, 0o755); writeErr != nil { //nolint:gosec // G306: an executable
			return nil, writeErr
		}
	}
	for _, applet := range applets {
		if symlinkErr := os.Symlink("busybox", filepath.Join(bin, applet)); symlinkErr != nil {
			return nil, symlinkErr
		}
	}
	archive, err := exec.Command("tar", "-C", rootfs, "-c", ".").Output()
	if err != nil {
		return nil, fmt.Errorf("tar the busybox root: %w", err)
	}
	return archive, nil
}

// RunCLI runs argv (a runtime's command line tool: docker, podman) with
// stdin from in (nil: none) and a two-minute limit, and returns its
// standard output; an error names what (the command as the test sees it,
// without the harness' own flags) and carries its standard error.
func RunCLI(in io.Reader, what string, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	if in != nil {
		cmd.Stdin = in
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", what, err, stderr.Bytes())
	}
	return out, nil
}
