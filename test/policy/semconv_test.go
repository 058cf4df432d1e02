// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
)

// semconvFile lists the semantic-conventions entries metadata.yaml claims
// to follow, copied from the conventions' model of that version, and what
// metadata.yaml claims about the rest (its "ours" section).
const semconvFile = "testdata/semconv/v1.44.0.yaml"

type semconvList struct {
	Version              string                       `json:"semconv_version"`
	Metrics              map[string]semconvMetric     `json:"metrics"`
	Attributes           map[string]semconvAttribute  `json:"attributes"`
	DeprecatedMetrics    map[string]semconvDeprecated `json:"deprecated_metrics"`
	DeprecatedAttributes map[string]semconvDeprecated `json:"deprecated_attributes"`
	Ours                 struct {
		Omitted map[string]map[string]string `json:"omitted"` // metric -> convention attribute -> why ours leaves it out
		Extra   map[string]map[string]string `json:"extra"`   // metric -> our attribute -> why
		// EnumInCode: attributes metadata.yaml declares a plain string
		// although the conventions list their values, with why; their
		// values are the code's (enumInCode), held to the conventions'.
		EnumInCode map[string]string `json:"enum_in_code"`
		NotDefined struct {
			Metrics    map[string]string `json:"metrics"`
			Attributes map[string]string `json:"attributes"`
		} `json:"not_defined"`
	} `json:"ours"`
}

type semconvMetric struct {
	Instrument string                            `json:"instrument"` // counter, updowncounter, gauge
	Unit       string                            `json:"unit"`
	ValueType  string                            `json:"value_type"` // int, double
	Attributes map[string]semconvMetricAttribute `json:"attributes"`
}

type semconvMetricAttribute struct {
	RequirementLevel string   `json:"requirement_level"`
	Values           []string `json:"values"` // where the metric restricts the registry's
}

type semconvAttribute struct {
	Type   string   `json:"type"`   // string, string[], int, double, boolean
	Values []string `json:"values"` // an enum's members
}

type semconvDeprecated struct {
	RenamedTo string `json:"renamed_to"`
}

// mdatagen's metadata.yaml, the parts compared.
type mdFile struct {
	ResourceAttributes map[string]mdAttribute `json:"resource_attributes"`
	Attributes         map[string]mdAttribute `json:"attributes"`
	Metrics            map[string]mdMetric    `json:"metrics"`
}

type mdAttribute struct {
	NameOverride string   `json:"name_override"`
	Type         string   `json:"type"`
	Enum         []string `json:"enum"`
	// enumInCode are the values the code emits for an attribute of
	// ours.enum_in_code (codeEnums), checked in Enum's place.
	enumInCode []string
}

// codeEnums are the values the code gives the attributes of
// ours.enum_in_code.
var codeEnums = map[string][]string{
	"k8s.volume.type": fsstats.VolumeTypes(),
}

type mdMetric struct {
	Unit  string `json:"unit"`
	Gauge *struct {
		ValueType string `json:"value_type"`
	} `json:"gauge"`
	Sum *struct {
		ValueType              string `json:"value_type"`
		Monotonic              bool   `json:"monotonic"`
		AggregationTemporality string `json:"aggregation_temporality"`
	} `json:"sum"`
	Attributes []string `json:"attributes"`
}

// instrument is the conventions' name of m's instrument.
func (m mdMetric) instrument() (instrument, valueType string) {
	switch {
	case m.Gauge != nil:
		return "gauge", m.Gauge.ValueType
	case m.Sum == nil:
		return "?", ""
	case m.Sum.AggregationTemporality != "cumulative":
		return "sum with " + m.Sum.AggregationTemporality + " temporality", m.Sum.ValueType
	case m.Sum.Monotonic:
		return "counter", m.Sum.ValueType
	}
	return "updowncounter", m.Sum.ValueType
}

// mdTypes maps the conventions' attribute types to mdatagen's.
var mdTypes = map[string]string{"string": "string", "string[]": "slice", "int": "int", "double": "double", "boolean": "bool"}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), path)
}

// TestSemconv checks metadata.yaml against the semantic-conventions
// entries it claims to follow (semconvFile): every claimed metric is there
// with the entry's instrument, unit and value type, and the entry's
// attributes, save the ones "ours.omitted" lists, and no other save
// "ours.extra"'s; every attribute the conventions define has their type
// and values; every other metric and attribute is in
// "ours.not_defined"; no name is one the conventions deprecated, nor
// follows a deprecated system.* pattern (*.network.packets).
func TestSemconv(t *testing.T) {
	t.Chdir(repoRoot) // the files it checks are the repository\'s
	var sc semconvList
	readYAML(t, semconvFile, &sc)
	require.Equal(t, strings.TrimSuffix(filepath.Base(semconvFile), ".yaml"), sc.Version, "the file is named after its version")
	var md mdFile
	readYAML(t, "metadata.yaml", &md)
	for _, p := range semconvProblems(&sc, &md) {
		t.Error(p)
	}
}

// semconvProblems lists every difference between md and the claims of sc,
// each naming the metric or attribute and the field.
func semconvProblems(sc *semconvList, md *mdFile) []string {
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }

	// Attributes by the name they are emitted with.
	attrs := map[string]mdAttribute{}
	emitted := func(key string) string {
		if a, ok := md.Attributes[key]; ok && a.NameOverride != "" {
			return a.NameOverride
		}
		return key
	}
	for k, a := range md.Attributes {
		attrs[emitted(k)] = a
	}
	for k, a := range md.ResourceAttributes {
		attrs[k] = a
	}
	for _, name := range sortedKeys(sc.Ours.EnumInCode) {
		a, ok := attrs[name]
		switch {
		case !ok:
			bad("ours.enum_in_code: attribute %s is not in metadata.yaml", name)
		case len(a.Enum) > 0:
			bad("ours.enum_in_code: attribute %s is an enum in metadata.yaml: check it there", name)
		case codeEnums[name] == nil:
			bad("ours.enum_in_code: attribute %s has no values in codeEnums", name)
		default:
			a.enumInCode = codeEnums[name]
			attrs[name] = a
		}
	}

	for _, name := range sortedKeys(sc.Metrics) {
		e := sc.Metrics[name]
		m, ok := md.Metrics[name]
		if !ok {
			bad("metric %s: claimed (semconv %s) but missing from metadata.yaml", name, sc.Version)
			continue
		}
		if _, dup := sc.Ours.NotDefined.Metrics[name]; dup {
			bad("metric %s: both claimed and in ours.not_defined", name)
		}
		inst, vt := m.instrument()
		if inst != e.Instrument {
			bad("metric %s: instrument is %s, semconv %s: %s", name, inst, sc.Version, e.Instrument)
		}
		if m.Unit != e.Unit {
			bad("metric %s: unit is %q, semconv %s: %q", name, m.Unit, sc.Version, e.Unit)
		}
		if vt != e.ValueType {
			bad("metric %s: value type is %s, semconv %s: %s", name, vt, sc.Version, e.ValueType)
		}
		ours := map[string]bool{}
		for _, k := range m.Attributes {
			ours[emitted(k)] = true
		}
		omitted, extra := sc.Ours.Omitted[name], sc.Ours.Extra[name]
		for _, a := range sortedKeys(e.Attributes) {
			ea := e.Attributes[a]
			_, isOmitted := omitted[a]
			switch {
			case ours[a] && isOmitted:
				bad("metric %s: attribute %s is emitted but listed in ours.omitted", name, a)
			case ours[a]:
				if len(ea.Values) > 0 {
					out = append(out, valueProblems(fmt.Sprintf("metric %s: attribute %s", name, a), attrs[a], ea.Values, sc.Version)...)
				}
			case ea.RequirementLevel == "required":
				bad("metric %s: attribute %s (required) is missing", name, a)
			case !isOmitted:
				bad("metric %s: attribute %s (%s) is missing and not in ours.omitted", name, a, ea.RequirementLevel)
			}
		}
		for a := range omitted {
			if _, ok := e.Attributes[a]; !ok {
				bad("metric %s: ours.omitted lists %s, which semconv %s does not define on it", name, a, sc.Version)
			}
		}
		for _, a := range sortedKeys(ours) {
			_, isConv := e.Attributes[a]
			_, isExtra := extra[a]
			switch {
			case isConv && isExtra:
				bad("metric %s: attribute %s is in semconv %s and in ours.extra", name, a, sc.Version)
			case !isConv && !isExtra:
				bad("metric %s: attribute %s is not in semconv %s and not in ours.extra", name, a, sc.Version)
			}
		}
		for a := range extra {
			if !ours[a] {
				bad("metric %s: ours.extra lists %s, which it does not have", name, a)
			}
		}
	}
	for name := range sc.Ours.Omitted {
		if _, ok := sc.Metrics[name]; !ok {
			bad("ours.omitted: %s is not a claimed metric", name)
		}
	}
	for name := range sc.Ours.Extra {
		if _, ok := sc.Metrics[name]; !ok {
			bad("ours.extra: %s is not a claimed metric", name)
		}
	}

	// Every metric of ours is claimed or not defined, under a name that is
	// not deprecated.
	for _, name := range sortedKeys(md.Metrics) {
		_, claimed := sc.Metrics[name]
		_, undefined := sc.Ours.NotDefined.Metrics[name]
		if !claimed && !undefined {
			bad("metric %s: neither claimed (semconv %s) nor in ours.not_defined: look it up in the conventions", name, sc.Version)
		}
		out = append(out, deprecatedMetricProblems(name, sc)...)
	}
	for name := range sc.Ours.NotDefined.Metrics {
		if _, ok := md.Metrics[name]; !ok {
			bad("ours.not_defined: metric %s is not in metadata.yaml", name)
		}
	}

	// Every attribute of ours has the conventions' type and values, or is
	// not defined; none is deprecated.
	for _, name := range sortedKeys(attrs) {
		a := attrs[name]
		e, defined := sc.Attributes[name]
		_, undefined := sc.Ours.NotDefined.Attributes[name]
		switch {
		case defined && undefined:
			bad("attribute %s: in semconv %s and in ours.not_defined", name, sc.Version)
		case defined:
			if want := mdTypes[e.Type]; a.Type != want {
				bad("attribute %s: type is %s, semconv %s: %s (mdatagen %s)", name, a.Type, sc.Version, e.Type, want)
			}
			if len(e.Values) > 0 {
				out = append(out, valueProblems("attribute "+name, a, e.Values, sc.Version)...)
			}
		case !undefined:
			bad("attribute %s: not in semconv %s's list and not in ours.not_defined: look it up in the conventions", name, sc.Version)
		}
		if d, ok := sc.DeprecatedAttributes[name]; ok {
			bad("attribute %s: deprecated in semconv %s, renamed to %s", name, sc.Version, d.RenamedTo)
		}
	}
	for name := range sc.Ours.NotDefined.Attributes {
		if _, ok := attrs[name]; !ok {
			bad("ours.not_defined: attribute %s is not in metadata.yaml", name)
		}
	}
	return out
}

// valueProblems: an attribute whose values the conventions list must be an
// enum of some of them.
func valueProblems(what string, a mdAttribute, values []string, version string) []string {
	if len(a.Enum) == 0 && a.enumInCode != nil {
		a.Enum = a.enumInCode
	}
	if len(a.Enum) == 0 {
		return []string{fmt.Sprintf("%s: not an enum, semconv %s lists its values %v", what, version, values)}
	}
	var out []string
	for _, v := range a.Enum {
		if !slices.Contains(values, v) {
			out = append(out, fmt.Sprintf("%s: value %q is not one of semconv %s's %v", what, v, version, values))
		}
	}
	return out
}

// entityPrefixes are the namespaces of our metrics, in which a deprecated
// system.* name's pattern (system.network.packets: *.network.packets) is
// not to be copied either.
var entityPrefixes = []string{"container.", "k8s.pod.", "k8s.node."}

func deprecatedMetricProblems(name string, sc *semconvList) []string {
	var out []string
	for _, dep := range sortedKeys(sc.DeprecatedMetrics) {
		d := sc.DeprecatedMetrics[dep]
		if name == dep {
			out = append(out, fmt.Sprintf("metric %s: deprecated in semconv %s, renamed to %s", name, sc.Version, d.RenamedTo))
			continue
		}
		suffix, ok := strings.CutPrefix(dep, "system.")
		if !ok {
			continue
		}
		for _, p := range entityPrefixes {
			if name == p+suffix {
				out = append(out, fmt.Sprintf("metric %s: copies %s, deprecated in semconv %s for %s (use %s%s)",
					name, dep, sc.Version, d.RenamedTo, p, strings.TrimPrefix(d.RenamedTo, "system.")))
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
