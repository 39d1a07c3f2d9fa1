package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// Metrics reads the daemon's metrics (core.Metrics).
type Metrics interface {
	Metrics(ctx context.Context) ([]core.MetricFamily, error)
}

var _ Metrics = (*core.Metrics)(nil)

// metricsContentType is the Prometheus text exposition format, 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// metricsWait is how long a scrape waits for the count.
const metricsWait = 10 * time.Second

// routeMetrics serves GET /metrics, behind the API token (or a browser's
// session), when there are metrics.
func (s *Server) routeMetrics(mux *http.ServeMux, m Metrics) {
	if m == nil {
		return
	}
	mux.Handle("GET /metrics", s.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Answered well before WriteTimeout: a first count that takes
		// longer goes on, and this scrape is told to come back.
		ctx, cancel := context.WithTimeout(r.Context(), metricsWait)
		defer cancel()
		fams, err := m.Metrics(ctx)
		if errors.Is(err, core.ErrMetricsBusy) {
			w.Header().Set("Retry-After", "10")
			writeError(w, http.StatusServiceUnavailable, "busy", "the metrics are still being counted (the first count reads the whole history); ask again")
			return
		}
		if err != nil {
			s.log.Error("collect metrics", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "the metrics could not be read")
			return
		}
		var b bytes.Buffer
		if err := writeExposition(&b, fams); err != nil {
			s.log.Error("write metrics", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "the metrics could not be written")
			return
		}
		w.Header().Set("Content-Type", metricsContentType)
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b.Bytes())
	})))
}

// writeExposition writes fams in the Prometheus text format 0.0.4: for
// each family its HELP and TYPE, then its samples. Names come from the
// code and are checked; label values may hold anything (a model's name as
// its provider reported it) and are escaped, invalid UTF-8 replaced.
func writeExposition(b *bytes.Buffer, fams []core.MetricFamily) error {
	for _, f := range fams {
		if !metricName(f.Name) {
			return fmt.Errorf("web: metric name %q", f.Name)
		}
		switch f.Type {
		case core.MetricCounter, core.MetricGauge, core.MetricHistogram:
		default:
			return fmt.Errorf("web: metric %s: type %q", f.Name, f.Type)
		}
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f.Name, escapeHelp(f.Help), f.Name, f.Type)
		for _, s := range f.Samples {
			switch s.Suffix {
			case "":
			case "_bucket", "_sum", "_count":
				if f.Type != core.MetricHistogram {
					return fmt.Errorf("web: metric %s: suffix %q on a %s", f.Name, s.Suffix, f.Type)
				}
			default:
				return fmt.Errorf("web: metric %s: suffix %q", f.Name, s.Suffix)
			}
			b.WriteString(f.Name)
			b.WriteString(s.Suffix)
			if len(s.Labels) > 0 {
				b.WriteByte('{')
				for i, l := range s.Labels {
					if !labelName(l.Name) {
						return fmt.Errorf("web: metric %s: label name %q", f.Name, l.Name)
					}
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(l.Name)
					b.WriteString(`="`)
					b.WriteString(escapeLabel(l.Value))
					b.WriteByte('"')
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(formatValue(s.Value))
			b.WriteByte('\n')
		}
	}
	return nil
}

// metricName reports whether s matches [a-zA-Z_:][a-zA-Z0-9_:]*.
func metricName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// labelName reports whether s matches [a-zA-Z_][a-zA-Z0-9_]* and is not
// reserved (a leading "__").
func labelName(s string) bool {
	return metricName(s) && !strings.Contains(s, ":") && !strings.HasPrefix(s, "__")
}

// escapeLabel escapes a label value: a backslash, a double quote and a
// line feed, the three the format escapes; invalid UTF-8 is replaced.
func escapeLabel(s string) string { return escape(s, true) }

// escapeHelp escapes a HELP text: a backslash and a line feed.
func escapeHelp(s string) string { return escape(s, false) }

func escape(s string, quote bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// formatValue writes v as the format reads it: whole numbers without an
// exponent, +Inf, -Inf and NaN by those names.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
