package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/core"
)

type fakeMetrics struct {
	fams []core.MetricFamily
	err  error
}

func (f fakeMetrics) Metrics(context.Context) ([]core.MetricFamily, error) { return f.fams, f.err }

func metricsServer(t *testing.T, m Metrics) *httptest.Server {
	t.Helper()
	s, err := New(Options{Chat: &fakeCore{}, Approvals: &fakeCore{}, Audit: &fakeCore{}, Token: token, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path, auth string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// hostile are label values an outsider may choose: a model's name as its
// provider reports it, a tool's name as the model wrote it.
var hostile = []string{
	`a"b`, `back\slash`, "new\nline", `end\`, `"`, `\"`, `\n`, "}{,=\"x\"} 1\nfake_metric 2",
	"\xff\xfe invalid", "tab\there", "cr\rhere", "# HELP x y", "", "ünïcødé ✓", strings.Repeat(`\"`, 50),
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	var samples []core.Sample
	for i, v := range hostile {
		samples = append(samples, core.Sample{Labels: []core.Label{{Name: "model", Value: v}, {Name: "i", Value: strconv.Itoa(i)}}, Value: float64(i)})
	}
	fams := []core.MetricFamily{
		{Name: "shelldon_hostile_total", Type: core.MetricCounter, Help: "Help with a \\ backslash\nand a line feed.", Samples: samples},
		{Name: "shelldon_up", Type: core.MetricGauge, Help: "Up.", Samples: []core.Sample{{Value: 1}}},
		{Name: "shelldon_latency_seconds", Type: core.MetricHistogram, Help: "Latency.", Samples: []core.Sample{
			{Suffix: "_bucket", Labels: []core.Label{{Name: "le", Value: "1"}}, Value: 2},
			{Suffix: "_bucket", Labels: []core.Label{{Name: "le", Value: "+Inf"}}, Value: 3},
			{Suffix: "_sum", Value: 4.5}, {Suffix: "_count", Value: 3},
		}},
	}
	srv := metricsServer(t, fakeMetrics{fams: fams})

	for _, auth := range []string{"", "Bearer nope", "Basic " + token, "Bearer " + token + "x"} {
		resp, body := get(t, srv, "/metrics", auth)
		if resp.StatusCode != 401 || strings.Contains(body, "shelldon_up") {
			t.Errorf("auth %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	resp, body := get(t, srv, "/metrics", "Bearer "+token)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	got, err := parseExposition(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	for i, v := range hostile {
		want := strings.ToValidUTF8(v, "\uFFFD")
		key := fmt.Sprintf("shelldon_hostile_total{model=%q,i=%q}", want, strconv.Itoa(i))
		if val, ok := got.values[key]; !ok || val != float64(i) {
			t.Errorf("label %q: got %v %v; the samples: %v", v, val, ok, got.values)
		}
	}
	if len(got.values) != len(hostile)+5 {
		t.Errorf("%d samples, want %d (an escape let one through): %v", len(got.values), len(hostile)+5, got.values)
	}
	if got.help["shelldon_hostile_total"] != "Help with a \\ backslash\nand a line feed." {
		t.Errorf("help = %q", got.help["shelldon_hostile_total"])
	}
	if got.values["shelldon_latency_seconds_bucket{le=\"+Inf\"}"] != 3 || got.values["shelldon_latency_seconds_sum"] != 4.5 {
		t.Errorf("histogram: %v", got.values)
	}
}

func TestMetricsRefusesBadNames(t *testing.T) {
	t.Parallel()
	cases := map[string]core.MetricFamily{
		"metric name":       {Name: "shelldon bad\n", Type: core.MetricGauge},
		"digit first":       {Name: "1shelldon", Type: core.MetricGauge},
		"empty name":        {Name: "", Type: core.MetricGauge},
		"type":              {Name: "shelldon_x", Type: "untyped\nfake 1"},
		"label name":        {Name: "shelldon_x", Type: core.MetricGauge, Samples: []core.Sample{{Labels: []core.Label{{Name: "a\"b", Value: "v"}}}}},
		"reserved label":    {Name: "shelldon_x", Type: core.MetricGauge, Samples: []core.Sample{{Labels: []core.Label{{Name: "__name__", Value: "v"}}}}},
		"label with colon":  {Name: "shelldon_x", Type: core.MetricGauge, Samples: []core.Sample{{Labels: []core.Label{{Name: "a:b", Value: "v"}}}}},
		"suffix on a gauge": {Name: "shelldon_x", Type: core.MetricGauge, Samples: []core.Sample{{Suffix: "_sum"}}},
		"odd suffix":        {Name: "shelldon_x", Type: core.MetricHistogram, Samples: []core.Sample{{Suffix: "_total"}}},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := metricsServer(t, fakeMetrics{fams: []core.MetricFamily{f}})
			resp, body := get(t, srv, "/metrics", "Bearer "+token)
			if resp.StatusCode != 500 || !strings.Contains(body, `"internal"`) || strings.Contains(body, "fake") {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
}

func TestMetricsErrorsAndAbsence(t *testing.T) {
	t.Parallel()
	srv := metricsServer(t, fakeMetrics{err: errors.New("database is locked")})
	resp, body := get(t, srv, "/metrics", "Bearer "+token)
	if resp.StatusCode != 500 || strings.Contains(body, "locked") {
		t.Errorf("a failed collection: %d %s", resp.StatusCode, body)
	}
	srv = metricsServer(t, fakeMetrics{err: fmt.Errorf("%w: %w", core.ErrMetricsBusy, context.DeadlineExceeded)})
	resp, body = get(t, srv, "/metrics", "Bearer "+token)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, `"busy"`) {
		t.Errorf("a count still running: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	srv = metricsServer(t, nil)
	if resp, body := get(t, srv, "/metrics", "Bearer "+token); resp.StatusCode != 404 {
		t.Errorf("without metrics: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, srv, "/metrics", ""); resp.StatusCode != 404 {
		t.Errorf("without metrics nor token: %d", resp.StatusCode)
	}
}

func TestFormatValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-3, "-3"}, {123456789012, "123456789012"}, {0.25, "0.25"}, {1e20, "1e+20"},
		{math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.NaN(), "NaN"}, {0.000001, "1e-06"},
	}
	for _, c := range cases {
		if got := formatValue(c.v); got != c.want {
			t.Errorf("formatValue(%v) = %q, want %q", c.v, got, c.want)
		}
		if _, err := parseValue(formatValue(c.v)); err != nil {
			t.Errorf("%q does not parse: %v", formatValue(c.v), err)
		}
	}
}

// FuzzLabelEscape: whatever a label's value holds, the exposition parses
// to one sample that carries it (invalid UTF-8 replaced).
func FuzzLabelEscape(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var b bytes.Buffer
		err := writeExposition(&b, []core.MetricFamily{{Name: "shelldon_x", Type: core.MetricGauge, Help: v,
			Samples: []core.Sample{{Labels: []core.Label{{Name: "v", Value: v}}, Value: 7}}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseExposition(b.String())
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		want := strings.ToValidUTF8(v, "\uFFFD")
		if len(got.values) != 1 || got.values[fmt.Sprintf("shelldon_x{v=%q}", want)] != 7 || got.help["shelldon_x"] != want {
			t.Fatalf("%q: %v %q", v, got.values, got.help)
		}
	})
}

// exposition is a parsed text exposition: each sample's value under its
// name and labels (values Go-quoted, in their order), each family's help.
type exposition struct {
	values map[string]float64
	help   map[string]string
	types  map[string]string
}

// parseExposition reads the text format 0.0.4 strictly: every line is a
// HELP, a TYPE or a sample; every sample's family has a TYPE before it (a
// histogram's _bucket, _sum and _count too); a label value's only escapes
// are \\, \" and \n; no sample appears twice.
func parseExposition(s string) (exposition, error) {
	e := exposition{values: map[string]float64{}, help: map[string]string{}, types: map[string]string{}}
	if s != "" && !strings.HasSuffix(s, "\n") {
		return e, errors.New("the last line does not end with a line feed")
	}
	for n, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if s == "" {
			break
		}
		fail := func(format string, a ...any) (exposition, error) {
			return e, fmt.Errorf("line %d %q: %s", n+1, line, fmt.Sprintf(format, a...))
		}
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, text, _ := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			if !metricName(name) {
				return fail("bad name")
			}
			h, err := unescape(text, false)
			if err != nil {
				return fail("%v", err)
			}
			e.help[name] = h
		case strings.HasPrefix(line, "# TYPE "):
			name, typ, _ := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			switch typ {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				return fail("type %q", typ)
			}
			if _, dup := e.types[name]; dup || !metricName(name) {
				return fail("a second or bad TYPE")
			}
			e.types[name] = typ
		case strings.HasPrefix(line, "#") || line == "":
			return fail("neither HELP, TYPE nor a sample")
		default:
			key, value, err := parseSample(line)
			if err != nil {
				return fail("%v", err)
			}
			name, _, _ := strings.Cut(key, "{")
			family := name
			if _, ok := e.types[family]; !ok {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if base, ok := strings.CutSuffix(name, suf); ok && e.types[base] == "histogram" {
						family = base
					}
				}
			}
			if _, ok := e.types[family]; !ok {
				return fail("no TYPE for %s", name)
			}
			if _, dup := e.values[key]; dup {
				return fail("a second sample of %s", key)
			}
			e.values[key] = value
		}
	}
	return e, nil
}

// parseSample reads name{l="v",...} value into its key and value.
func parseSample(line string) (string, float64, error) {
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return "", 0, errors.New("no value")
	}
	name := line[:i]
	if !metricName(name) {
		return "", 0, fmt.Errorf("bad name %q", name)
	}
	key := name
	rest := line[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		var labels []string
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 || !labelName(rest[:eq]) {
				return "", 0, fmt.Errorf("bad label at %q", rest)
			}
			lname := rest[:eq]
			rest = rest[eq+2:]
			var v strings.Builder
			closed := false
			for j := 0; j < len(rest); j++ {
				c := rest[j]
				if c == '\\' {
					if j+1 == len(rest) {
						return "", 0, errors.New("a backslash ends the line")
					}
					switch rest[j+1] {
					case '\\':
						v.WriteByte('\\')
					case '"':
						v.WriteByte('"')
					case 'n':
						v.WriteByte('\n')
					default:
						return "", 0, fmt.Errorf("escape \\%c", rest[j+1])
					}
					j++
					continue
				}
				if c == '"' {
					rest, closed = rest[j+1:], true
					break
				}
				v.WriteByte(c)
			}
			if !closed {
				return "", 0, errors.New("an unclosed label value")
			}
			labels = append(labels, fmt.Sprintf("%s=%q", lname, v.String()))
			if strings.HasPrefix(rest, ",") {
				rest = rest[1:]
			} else if !strings.HasPrefix(rest, "}") {
				return "", 0, fmt.Errorf("after a label: %q", rest)
			}
		}
		rest = rest[1:]
		key += "{" + strings.Join(labels, ",") + "}"
	}
	if !strings.HasPrefix(rest, " ") {
		return "", 0, errors.New("no space before the value")
	}
	v, err := parseValue(rest[1:])
	return key, v, err
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	if strings.ContainsAny(s, " \t") {
		return 0, fmt.Errorf("value %q (a timestamp is not written)", s)
	}
	return strconv.ParseFloat(s, 64)
}

// unescape reads a HELP text (quote false) or a label value.
func unescape(s string, quote bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", errors.New("a backslash ends the text")
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case '"':
			if !quote {
				return "", errors.New(`\" in a HELP`)
			}
			b.WriteByte('"')
		default:
			return "", fmt.Errorf("escape \\%c", s[i+1])
		}
		i++
	}
	return b.String(), nil
}
