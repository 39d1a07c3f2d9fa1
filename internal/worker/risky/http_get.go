package risky

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed http_get.md
var httpGetDescription string

type httpGetArgs struct {
	URL string `json:"url" jsonschema:"the http or https URL to fetch"`
}

// maxBody caps what http_get reads of a response.
const maxBody = 256 << 10

func httpGetTool(env Env) (*worker.Tool, error) {
	client := env.HTTP
	if client == nil {
		client = netguard.NewClient(netguard.Options{MaxBytes: maxBody, LAN: env.LAN})
	}
	t, err := worker.NewBuiltin(contracts.ToolHTTPGet, httpGetDescription,
		func(ctx context.Context, in httpGetArgs) (string, error) {
			res, err := client.Get(ctx, in.URL)
			if err != nil {
				return "", err
			}
			return formatResponse(res), nil
		})
	if err != nil {
		return nil, err
	}
	t.Guard = "the network guard (public addresses only)"
	if len(env.LAN) > 0 {
		t.Guard = "the network guard (public addresses, and the hosts of your network listed in http.allow_hosts)"
	}
	t.Check = decodeCheck(func(in httpGetArgs) error {
		_, err := client.CheckURL(in.URL)
		return err
	})
	return t, nil
}

func formatResponse(res netguard.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d, %s, %d bytes", res.Status, res.ContentType, res.Size)
	if len(res.Hops) > 1 {
		fmt.Fprintf(&b, ", after redirects: %s", strings.Join(res.Hops, " -> "))
	}
	if res.Truncated {
		fmt.Fprintf(&b, " (truncated at %d bytes)", len(res.Body))
	}
	b.WriteString("\n")
	if !utf8.Valid(res.Body) && strings.ContainsRune(string(res.Body), 0) {
		b.WriteString("[binary content not shown]")
		return b.String()
	}
	b.WriteString(strings.ToValidUTF8(string(res.Body), "\uFFFD"))
	return b.String()
}
