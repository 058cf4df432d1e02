package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module writes a module with a Linux file and its !linux stub into a
// temporary directory; stub is the stub file's body after the package line.
func module(t *testing.T, stub string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"m.go":          "package m\n\nimport \"strconv\"\n\nfunc Size() string { return strconv.Itoa(size()) }\n",
		"size_linux.go": "//go:build linux\n\npackage m\n\nfunc size() int { return 1 }\n",
		"size_other.go": "//go:build !linux\n\npackage m\n\n" + stub,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheckPassesWithStub(t *testing.T) {
	dir := module(t, "func size() int { return 0 }\n")
	for _, goos := range []string{"windows", "darwin", "linux"} {
		n, errs, err := check(dir, goos, false, []string{"./..."})
		if err != nil {
			t.Fatalf("GOOS=%s: %v", goos, err)
		}
		if len(errs) != 0 {
			t.Errorf("GOOS=%s: errors %q, want none", goos, errs)
		}
		if n < 5 { // the module's package, strconv and what strconv imports
			t.Errorf("GOOS=%s: %d packages checked", goos, n)
		}
	}
}

// The errors `GOOS=windows go build` gives: a stub missing on the other
// systems, and a body that uses a Linux-only name. Linux itself is fine.
func TestCheckFindsWhatOnlyOtherSystemsLack(t *testing.T) {
	for _, tc := range []struct{ name, stub, want string }{
		{"missing stub", "", "undefined: size"},
		{"linux-only name in a body", "func size() int { return linuxOnly() }\n", "undefined: linuxOnly"},
		{"type error", "func size() int { return \"0\" }\n", "cannot use \"0\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := module(t, tc.stub)
			_, errs, err := check(dir, "windows", false, []string{"./..."})
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
				t.Errorf("errors %q, want one containing %q", errs, tc.want)
			}
			_, errs, err = check(dir, "linux", false, []string{"./..."})
			if err != nil || len(errs) != 0 {
				t.Errorf("GOOS=linux: %v %q, want no errors", err, errs)
			}
		})
	}
}

// A pattern that names nothing fails the check: it checked nothing.
func TestCheckNoPackages(t *testing.T) {
	dir := module(t, "func size() int { return 0 }\n")
	_, errs, err := check(dir, "windows", false, []string{"./nothing/..."})
	if err == nil && len(errs) == 0 {
		t.Error("a pattern that matches nothing passed")
	}
	if err := os.RemoveAll(filepath.Join(dir, "m.go")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"size_linux.go", "size_other.go"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, err := check(dir, "windows", false, []string{"./..."}); err == nil && len(errs) == 0 {
		t.Error("a module without packages passed")
	}
}

// A test file that only fails without cgo (the !cgo test of a cgo/no-cgo
// split, as receiver/scrape has) is checked with -tests only.
func TestCheckTests(t *testing.T) {
	dir := module(t, "func size() int { return 0 }\n")
	body := "//go:build !cgo\n\npackage m\n\nimport \"testing\"\n\nfunc TestSize(t *testing.T) { _ = noSuchHelper() }\n"
	if err := os.WriteFile(filepath.Join(dir, "size_nocgo_test.go"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, err := check(dir, "linux", false, []string{"./..."}); err != nil || len(errs) != 0 {
		t.Errorf("without tests: %v %q, want no errors", err, errs)
	}
	_, errs, err := check(dir, "linux", true, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "undefined: noSuchHelper") {
		t.Errorf("with tests: %q, want the one undefined name once", errs)
	}
}

// An os/arch value checks that architecture: a file for amd64 only, with
// no arm64 counterpart, fails linux/arm64 and passes linux/amd64.
func TestCheckArch(t *testing.T) {
	dir := module(t, "func size() int { return 0 }\n")
	if err := os.Rename(filepath.Join(dir, "size_linux.go"), filepath.Join(dir, "size_linux_amd64.go")); err != nil {
		t.Fatal(err)
	}
	if _, errs, err := check(dir, "linux/amd64", false, []string{"./..."}); err != nil || len(errs) != 0 {
		t.Errorf("linux/amd64: %v %q, want no errors", err, errs)
	}
	_, errs, err := check(dir, "linux/arm64", false, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "undefined: size") {
		t.Errorf("linux/arm64: %q, want the one undefined name", errs)
	}
}
