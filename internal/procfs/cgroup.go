// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CgroupLine is one line of /proc/<pid>/cgroup: "hierarchy-ID:controllers:path".
// On cgroup v2 (and for the v2 tree of a hybrid node) the line is "0::path"
// with no controllers.
type CgroupLine struct {
	HierarchyID int
	Controllers []string // nil for the v2 line and for named v1 hierarchies without controllers
	Path        string
}

// Cgroup reads /proc/<pid>/cgroup. A process that exited returns an error
// wrapping fs.ErrNotExist (or ESRCH), which callers treat as "gone".
func (f FS) Cgroup(pid int) ([]CgroupLine, error) {
	data, p, err := f.readFile(strconv.Itoa(pid), "cgroup")
	if err != nil {
		return nil, err
	}
	lines, err := parseCgroup(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return lines, nil
}

// parseCgroup parses the lines of /proc/<pid>/cgroup. Every non-empty line
// must have two colons, a decimal hierarchy ID and an absolute path (the
// path itself may contain colons).
func parseCgroup(data []byte) ([]CgroupLine, error) {
	var out []CgroupLine
	for i, raw := range bytes.Split(data, []byte{'\n'}) {
		if len(raw) == 0 {
			continue
		}
		line := string(raw)
		id, rest, ok1 := strings.Cut(line, ":")
		ctrls, path, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("line %d: want hierarchy-ID:controllers:path, got %q", i+1, line)
		}
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 || strconv.Itoa(n) != id {
			return nil, fmt.Errorf("line %d: malformed hierarchy ID %q", i+1, id)
		}
		if !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("line %d: cgroup path %q is not absolute", i+1, path)
		}
		cl := CgroupLine{HierarchyID: n, Path: path}
		if ctrls != "" {
			cl.Controllers = strings.Split(ctrls, ",")
		}
		out = append(out, cl)
	}
	if len(out) == 0 {
		return nil, errors.New("no cgroup lines")
	}
	return out, nil
}

// String formats the line as the kernel prints it.
func (l CgroupLine) String() string {
	return strconv.Itoa(l.HierarchyID) + ":" + strings.Join(l.Controllers, ",") + ":" + l.Path
}
