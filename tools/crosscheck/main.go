// Command crosscheck type-checks Go packages for other operating systems
// and architectures from source, without compiling them: what
// `GOOS=<os> GOARCH=<arch> go build` would report as a type or build-tag
// error (an undefined name in a file that only builds on Linux, a missing
// !linux stub, a syscall field whose type differs on arm64), for a fraction
// of the CPU.
//
//	crosscheck -goos darwin,windows,linux/arm64 [-tests] [-C dir] ./...
//
// Every package the patterns match and every package they import is
// parsed and type-checked, function bodies included, with CGO_ENABLED=0
// and the given GOOS, and GOARCH where a value is os/arch (the host's
// otherwise; go list selects the files, so build tags count as the
// compiler's do). The type checker is the compiler's front end
// (go/types and the compiler's types2 are one checker), so the errors are
// the same; only back-end failures (assembly, the linker) are not seen.
// Exits 1 naming every error, 2 on a usage or load failure.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	goos := flag.String("goos", "darwin,windows", "GOOS or GOOS/GOARCH values to check, separated by commas or spaces")
	dir := flag.String("C", ".", "directory to run go list in (the module to check)")
	tests := flag.Bool("tests", false, "check the packages' test files too")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: crosscheck [-goos list] [-C dir] packages...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	systems := strings.FieldsFunc(*goos, func(r rune) bool { return r == ',' || r == ' ' })
	if flag.NArg() == 0 || len(systems) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	failed := false
	for _, g := range systems {
		n, errs, err := check(*dir, g, *tests, flag.Args())
		if err != nil {
			fmt.Fprintf(os.Stderr, "crosscheck: %s: %v\n", g, err)
			os.Exit(2)
		}
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "%s: %s\n", g, e)
		}
		fmt.Printf("%s: %d packages type-checked, %d errors\n", g, n, len(errs))
		failed = failed || len(errs) > 0
	}
	if failed {
		os.Exit(1)
	}
}

// check loads patterns (with their tests if tests is set) and everything
// they import from source for platform (GOOS, or GOOS/GOARCH) and returns
// how many packages it checked and their errors, each once.
func check(dir, platform string, tests bool, patterns []string) (int, []string, error) {
	env := append(os.Environ(), "CGO_ENABLED=0")
	goos, goarch, withArch := strings.Cut(platform, "/")
	env = append(env, "GOOS="+goos)
	if withArch {
		env = append(env, "GOARCH="+goarch)
	}
	cfg := &packages.Config{
		// NeedDeps with NeedTypes: every package from source, bodies too
		// (no export data, so nothing is compiled).
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports |
			packages.NeedDeps | packages.NeedTypes,
		Dir:   dir,
		Tests: tests,
		Env:   env,
	}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return 0, nil, err
	}
	if len(roots) == 0 {
		return 0, nil, fmt.Errorf("no packages match %s", strings.Join(patterns, " "))
	}
	n := 0
	var errs []string
	seen := map[string]bool{} // a package and its test variant share errors
	packages.Visit(roots, nil, func(p *packages.Package) {
		n++
		for _, e := range p.Errors {
			msg := fmt.Sprintf("%s: %s", p.PkgPath, e)
			if !seen[msg] {
				seen[msg] = true
				errs = append(errs, msg)
			}
		}
	})
	return n, errs, nil
}
