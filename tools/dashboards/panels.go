// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// ds is every panel's and variable's data source: the dashboard's
// datasource variable.
var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// board is one generated dashboard: its file under dashboards/.
type board struct {
	file    string
	builder *dashboard.DashboardBuilder
}

func newBoard(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{"containerstats", "kubernetes", "opentelemetry"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("30s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Type("prometheus"))
}

// labelVar is a query variable of label values: label_values(metric,
// label), filtered by the selector of the variables before it.
func labelVar(name, label, metric, filter string, multi bool) *dashboard.QueryVariableBuilder {
	sel := metric
	if filter != "" {
		sel = metric + "{" + filter + "}"
	}
	q := fmt.Sprintf("label_values(%s, %s)", sel, label)
	v := dashboard.NewQueryVariableBuilder(name).
		Label(name).
		Datasource(ds).
		Query(dashboard.StringOrMap{String: cog.ToPtr(q)}).
		Definition(q).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
	if multi {
		v = v.Multi(true).IncludeAll(true).AllValue(".*")
	}
	return v
}

// clusterVar is the optional cluster variable: k8s.cluster.name where a
// processor (k8sattributes, resource) adds it; without it, "All" (.*) also
// matches series that have no such label.
func clusterVar() *dashboard.QueryVariableBuilder {
	return labelVar("cluster", "k8s_cluster_name", "k8s_node_cpu_time_seconds_total", "", true).
		Description("k8s.cluster.name, where the pipeline adds it (optional: All matches series without it)")
}

// sel joins label matchers into a selector body.
func sel(matchers ...string) string { return strings.Join(matchers, ", ") }

const (
	mCluster   = `k8s_cluster_name=~"$cluster"`
	mNamespace = `k8s_namespace_name=~"$namespace"`
	mPod       = `k8s_pod_name=~"$pod"`
	mNode      = `k8s_node_name=~"$node"`
	rate       = "$__rate_interval"
)

// q is one target: its expression and legend.
type q struct {
	expr, legend string
}

// ts is a time series panel of the targets, in unit (Grafana's unit IDs).
func ts(title, description, unit string, w uint32, targets ...q) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds).
		Unit(unit).
		Height(8).
		Span(w).
		FillOpacity(10).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"lastNotNull", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
	for i, t := range targets {
		p = p.WithTarget(prometheus.NewDataqueryBuilder().
			Expr(t.expr).
			LegendFormat(t.legend).
			RefId(string(rune('A' + i))))
	}
	return p
}

func row(title string) *dashboard.RowBuilder { return dashboard.NewRowBuilder(title) }
