// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// allMetrics enables every metric mdatagen knows (its all_set test config),
// so the scrape reads every file any metric needs.
func allMetrics(t *testing.T) metadata.MetricsBuilderConfig {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "internal", "metadata", "testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("all_set")
	require.NoError(t, err)
	cfg := metadata.NewDefaultMetricsBuilderConfig()
	require.NoError(t, sub.Unmarshal(&cfg))
	return cfg
}

const writeEvents = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_DELETE_SELF | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_MOVE_SELF

// treeDigest hashes every file's path, mode, owner and content.
func treeDigest(t *testing.T, root string) [32]byte {
	h := sha256.New()
	require.NoError(t, filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		h.Write([]byte(p + info.Mode().String() + info.ModTime().String()))
		h.Write([]byte{byte(st.Uid), byte(st.Uid >> 8), byte(st.Gid)})
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p) //nolint:gosec // G122: a test: walks a tree the test made itself
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	}))
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// TestReadOnlyByProof: a full scrape with every metric enabled, of every
// fixture layout whose files are read-only and owned by another user, opens
// nothing for writing and changes nothing: inotify on every directory sees
// no write, attribute change, create, delete or rename (IN_CLOSE_WRITE would
// even catch a file opened for writing and closed unwritten), and the tree's
// digest is unchanged.
func TestReadOnlyByProof(t *testing.T) {
	const nobody = 65534
	mbc := allMetrics(t)
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type()&fs.ModeSymlink != 0 {
					return err
				}
				mode := os.FileMode(0o444)
				if d.IsDir() {
					mode = 0o555
				}
				if os.Geteuid() == 0 {
					if err := os.Lchown(p, nobody, nobody); err != nil { //nolint:gosec // G122: a test: walks a tree the test made itself
						return err
					}
				}
				return os.Chmod(p, mode) //nolint:gosec // G122: a test: walks a tree the test made itself
			}))
			t.Cleanup(func() { // let t.TempDir remove it
				_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.IsDir() {
						_ = os.Chmod(p, 0o755) //nolint:gosec // G122: a test: walks a tree the test made itself
					}
					return nil
				})
			})
			before := treeDigest(t, root)

			fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
			require.NoError(t, err)
			defer syscall.Close(fd)
			require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					_, err = syscall.InotifyAddWatch(fd, p, writeEvents)
				}
				return err
			}))

			clk := &fakeClock{now: t0}
			s := New(newSettings(), Options{Host: testHost(root), NodeName: "n", StandaloneContainers: true, MetricsBuilderConfig: mbc, Now: clk.Now})
			require.NoError(t, s.Start(context.Background(), nil))
			for i := 0; i < 2; i++ {
				m, scrapeErr := s.Scrape(context.Background())
				require.NoError(t, scrapeErr)
				require.Positive(t, m.DataPointCount())
				clk.now = clk.now.Add(10 * time.Second)
			}
			require.NoError(t, s.Shutdown(context.Background()))

			buf := make([]byte, 64<<10)
			n, err := syscall.Read(fd, buf)
			if err != syscall.EAGAIN {
				require.NoError(t, err)
				t.Fatalf("the scrape changed the tree: %d bytes of inotify events", n)
			}
			assert.Equal(t, before, treeDigest(t, root), "tree digest changed")
		})
	}
}

// TestNoWriteCallsInProductionCode: the receiver's own (non-test) code has
// no call that writes, creates, removes or changes a file, and no call of a
// mutating CRI or containerd method. Test harnesses (cgrouptest, hosttree,
// containerdtest, gputest) are the only code allowed to write.
func TestNoWriteCallsInProductionCode(t *testing.T) {
	forbidden := regexp.MustCompile(`\bos\.(WriteFile|Create|CreateTemp|OpenFile|Remove|RemoveAll|Mkdir|MkdirAll|MkdirTemp|Chmod|Chown|Lchown|Chtimes|Rename|Symlink|Link|Truncate)\(|` +
		`\bsyscall\.(Write|Pwrite|Unlink|Rmdir|Mkdir|Creat|Truncate|Ftruncate|Chmod|Fchmod|Chown|Rename)\(|` +
		`O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND|` +
		`\.(RunPodSandbox|StopPodSandbox|RemovePodSandbox|CreateContainer|StartContainer|StopContainer|RemoveContainer|UpdateContainerResources|ReopenContainerLog|ExecSync|Exec|Attach|PortForward|UpdateRuntimeConfig|CheckpointContainer)\(ctx|\.(Kill|Delete|Update|Create|Start|Pause|Resume|Checkpoint|Write)\(ctx, &\w+\.\w*Request`)
	allowed := regexp.MustCompile(`/internal/testing/|/gputest/`) // test-only code
	var scanned int
	for _, dir := range []string{"../../internal", "../../receiver", "../.."} {
		entries := []string{}
		if dir == "../.." {
			matches, _ := filepath.Glob("../../*.go")
			entries = matches
		} else {
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
					entries = append(entries, p)
				}
				return err
			}))
		}
		for _, p := range entries {
			if strings.HasSuffix(p, "_test.go") || allowed.MatchString(filepath.ToSlash(p)) {
				continue
			}
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			scanned++
			for i, line := range strings.Split(string(data), "\n") {
				code, _, _ := strings.Cut(line, "//")
				if loc := forbidden.FindString(code); loc != "" {
					t.Errorf("%s:%d: %q in production code: the receiver must only read", p, i+1, loc)
				}
			}
		}
	}
	assert.Greater(t, scanned, 20, "scanned too few files: the walk is wrong")
}
