// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// TaskState is a thread's scheduler state, grouped as the receiver reports it.
type TaskState uint8

// Task states. StateOther covers the kernel's transient or legacy letters
// (X dead, x, K, W, P, N): a thread in them is not counted.
const (
	StateRunning         TaskState = iota // R
	StateSleeping                         // S
	StateUninterruptible                  // D
	StateStopped                          // T (stopped) and t (traced)
	StateIdle                             // I (idle kernel thread)
	StateZombie                           // Z
	StateOther
	NumTaskStates = int(StateOther) // states that are counted
)

// stateOf maps the state letter of /proc/<tid>/stat.
func stateOf(c byte) TaskState {
	switch c {
	case 'R':
		return StateRunning
	case 'S':
		return StateSleeping
	case 'D':
		return StateUninterruptible
	case 'T', 't':
		return StateStopped
	case 'I':
		return StateIdle
	case 'Z':
		return StateZombie
	}
	return StateOther
}

// TaskCounts counts threads by state, indexed by TaskState.
type TaskCounts [NumTaskStates]int64

// TaskStateReader reads thread states from /proc/<tid>/stat, reusing its
// path and read buffers across calls: one per goroutine.
type TaskStateReader struct {
	proc  string
	path  []byte
	buf   []byte
	trace func(path string) // FS.WithTrace's hook; nil in production
}

// NewTaskStateReader returns a reader for this /proc.
func (f FS) NewTaskStateReader() *TaskStateReader {
	return &TaskStateReader{proc: f.proc, trace: f.trace, buf: make([]byte, 512)}
}

// State returns the state of thread tid. ok is false when the thread no
// longer exists (it exited between the listing and the read), which is not
// an error.
func (r *TaskStateReader) State(tid int) (st TaskState, ok bool, err error) {
	r.path = append(r.path[:0], r.proc...)
	r.path = append(r.path, '/')
	r.path = strconv.AppendInt(r.path, int64(tid), 10)
	r.path = append(r.path, "/stat\x00"...)
	fd, err := rawfile.Open(r.path)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("procfs: open %s: %w", r.pathString(), err)
	}
	defer rawfile.Close(fd)
	if r.trace != nil {
		r.trace(r.pathString())
	}
	r.buf, err = rawfile.ReadAll(fd, r.buf)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) || errors.Is(err, fs.ErrNotExist) {
			return 0, false, nil // exited after the open
		}
		return 0, false, fmt.Errorf("procfs: read %s: %w", r.pathString(), err)
	}
	n := len(r.buf)
	if n == 0 {
		return 0, false, nil // an exiting task can show an empty file
	}
	c, err := parseStatState(r.buf[:n])
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", r.pathString(), err)
	}
	return stateOf(c), true, nil
}

// pathString is the current path without its NUL, for errors.
func (r *TaskStateReader) pathString() string { return string(r.path[:len(r.path)-1]) }

// Count adds the state of every thread in tids to counts. Threads that exit
// while being read are skipped. It returns the first error other than that,
// after counting the rest.
func (r *TaskStateReader) Count(tids []int, counts *TaskCounts) error {
	var first error
	for _, tid := range tids {
		if tid <= 0 {
			continue // a thread outside the reader's PID namespace
		}
		st, ok, err := r.State(tid)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if ok && st < StateOther {
			counts[st]++
		}
	}
	return first
}

// errMalformedStat is wrapped by parseStatState's errors.
var errMalformedStat = errors.New("malformed stat")

// parseStatState returns the state letter of a /proc/<pid>/stat line:
// "pid (comm) S ...". comm may hold spaces and parentheses, so the state is
// the field after the LAST ')'.
func parseStatState(data []byte) (byte, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || bytes.IndexByte(data[:i], '(') < 0 {
		return 0, fmt.Errorf("%w: no (comm)", errMalformedStat)
	}
	rest := data[i+1:]
	if len(rest) < 2 || rest[0] != ' ' || !isLetter(rest[1]) || (len(rest) > 2 && rest[2] != ' ' && rest[2] != '\n') {
		return 0, fmt.Errorf("%w: no state after (comm)", errMalformedStat)
	}
	return rest[1], nil
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
