// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Command benchtable turns `go test -bench` output into the table BENCHMARKS.md
// records: for each layout and container count, the full scrape's cost per
// container next to the raw-read floor's, and their ratio.
//
//	go test -run '^$' -bench 'Benchmark(Scrape|Floor)' ./receiver/scrape | go run ./internal/testing/benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// result is one benchmark line's metrics by unit.
type result map[string]float64

var nameRE = regexp.MustCompile(`^Benchmark(\w+)/layout=([\w-]+)/N=(\d+)(-\d+)?$`)

type key struct {
	layout string
	n      int
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	scrape, floor := map[key]result{}, map[key]result{}
	var other []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, res, ok := parseLine(sc.Text())
		if !ok {
			continue
		}
		m := nameRE.FindStringSubmatch(name)
		if m == nil {
			other = append(other, sc.Text())
			continue
		}
		n, _ := strconv.Atoi(m[3])
		k := key{m[2], n}
		switch m[1] {
		case "Scrape":
			scrape[k] = res
		case "Floor":
			floor[k] = res
		default:
			other = append(other, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(scrape) == 0 {
		return fmt.Errorf("no BenchmarkScrape results in the input")
	}
	keys := make([]key, 0, len(scrape))
	for k := range scrape {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].layout != keys[j].layout {
			return keys[i].layout > keys[j].layout // v2 first
		}
		return keys[i].n < keys[j].n
	})
	fmt.Fprintln(out, "| layout | N | scrape ns/container | floor ns/container | scrape/floor | allocs/container | bytes/container | files/container |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range keys {
		s, f := scrape[k], floor[k]
		ratio := "-"
		if f["ns/container"] > 0 {
			ratio = fmt.Sprintf("%.2f", s["ns/container"]/f["ns/container"])
		}
		fmt.Fprintf(out, "| %s | %d | %.0f | %s | %s | %.0f | %.0f | %s |\n", k.layout, k.n,
			s["ns/container"], orDash(f["ns/container"], "%.0f"), ratio,
			s["allocs/op"]/float64(k.n), s["B/op"]/float64(k.n), orDash(f["files/container"], "%.1f"))
	}
	if len(other) > 0 {
		fmt.Fprintln(out, "\nPer-stage benchmarks:\n\n```")
		for _, l := range other {
			fmt.Fprintln(out, l)
		}
		fmt.Fprintln(out, "```")
	}
	return nil
}

func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// parseLine parses "BenchmarkX-2  20  123 ns/op  45 B/op ..." into the
// name and its value/unit pairs.
func parseLine(line string) (string, result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return "", nil, false
	}
	if _, err := strconv.Atoi(f[1]); err != nil {
		return "", nil, false
	}
	res := result{}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", nil, false
		}
		res[f[i+1]] = v
	}
	return f[0], res, true
}
