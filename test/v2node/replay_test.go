// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package v2node

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// testNode is one guest test (or the binary itself at the root) as
// test2json reported it.
type testNode struct {
	name     string
	output   bytes.Buffer
	action   string // pass, fail, skip ("" if it never ended: the binary died)
	elapsed  float64
	failed   bool // the root: the binary failed
	children []*testNode
	byName   map[string]*testNode
}

type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

func parseEvents(js []byte) *testNode {
	root := &testNode{byName: map[string]*testNode{}}
	get := func(name string) *testNode {
		n := root
		for _, part := range strings.Split(name, "/") {
			c := n.byName[part]
			if c == nil {
				c = &testNode{name: part, byName: map[string]*testNode{}}
				n.byName[part] = c
				n.children = append(n.children, c)
			}
			n = c
		}
		return n
	}
	sc := bufio.NewScanner(bytes.NewReader(js))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		n := root
		if e.Test != "" {
			n = get(e.Test)
		}
		switch e.Action {
		case "output":
			n.output.WriteString(e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				root.failed = e.Action == "fail"
			} else {
				n.action, n.elapsed = e.Action, e.Elapsed
			}
		}
	}
	return root
}

// The guest's test2json events become a tree: subtests under their
// parents, output and outcome each where it belongs, the binary's own
// result at the root.
func TestParseEvents(t *testing.T) {
	js := `{"Action":"start"}
{"Action":"run","Test":"TestV2"}
{"Action":"output","Test":"TestV2","Output":"=== RUN   TestV2\n"}
{"Action":"run","Test":"TestV2/CPU"}
{"Action":"output","Test":"TestV2/CPU","Output":"    cpu ok\n"}
{"Action":"pass","Test":"TestV2/CPU","Elapsed":1.5}
{"Action":"run","Test":"TestV2/PSI"}
{"Action":"output","Test":"TestV2/PSI","Output":"    psi bad\n"}
{"Action":"fail","Test":"TestV2/PSI","Elapsed":2}
{"Action":"fail","Test":"TestV2","Elapsed":4}
{"Action":"run","Test":"TestFieldNote2"}
{"Action":"skip","Test":"TestFieldNote2","Elapsed":0}
not json
{"Action":"output","Output":"FAIL\n"}
{"Action":"fail","Elapsed":5}
`
	root := parseEvents([]byte(js))
	if !root.failed || root.output.String() != "FAIL\n" {
		t.Fatalf("root: failed %v, output %q", root.failed, root.output.String())
	}
	if len(root.children) != 2 || root.children[0].name != "TestV2" || root.children[1].name != "TestFieldNote2" {
		t.Fatalf("top-level tests: %+v", root.children)
	}
	v2 := root.children[0]
	if v2.action != "fail" || len(v2.children) != 2 {
		t.Fatalf("TestV2: %s, %d subtests", v2.action, len(v2.children))
	}
	cpu, psi := v2.children[0], v2.children[1]
	if cpu.name != "CPU" || cpu.action != "pass" || cpu.elapsed != 1.5 || cpu.output.String() != "    cpu ok\n" {
		t.Errorf("CPU: %+v", cpu)
	}
	if psi.name != "PSI" || psi.action != "fail" || psi.output.String() != "    psi bad\n" {
		t.Errorf("PSI: %+v", psi)
	}
	if root.children[1].action != "skip" {
		t.Errorf("TestFieldNote2: %s", root.children[1].action)
	}
}
