package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

// commentedSetting matches a commented-out setting, "#key: default".
var commentedSetting = regexp.MustCompile(`(?m)^(\s*)#([a-z_]+:.*)$`)

// uncomment sets every commented-out setting of an InitTemplate result.
func uncomment(b []byte) []byte { return commentedSetting.ReplaceAll(b, []byte("$1$2")) }

func TestInitTemplate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                             string
		kind, model, baseURL, apiKeyEnv  string
		environ                          []string
		wantKind, wantModel, wantKeyName string
		wantURL                          string
	}{
		{
			name: "anthropic", kind: "anthropic", model: "claude-sonnet-4-5", apiKeyEnv: "ANTHROPIC_API_KEY",
			environ:  []string{"ANTHROPIC_API_KEY=" + anthropicKey},
			wantKind: "anthropic", wantModel: "claude-sonnet-4-5", wantKeyName: "ANTHROPIC_API_KEY", wantURL: "https://api.anthropic.com",
		},
		{
			name: "openai, defaults", kind: "openai",
			environ:  []string{"OPENAI_API_KEY=" + openAIKey},
			wantKind: "openai", wantModel: "gpt-4o-mini", wantKeyName: "OPENAI_API_KEY", wantURL: "https://api.openai.com/v1",
		},
		{
			name: "ollama, keyless", kind: "openai", model: "llama3.2:1b", baseURL: "http://localhost:11434/v1",
			wantKind: "openai", wantModel: "llama3.2:1b", wantURL: "http://localhost:11434/v1",
		},
		{
			name: "values that need quoting", kind: "openai", model: "yes", baseURL: "https://llm.example.com/v1/", apiKeyEnv: "LLM_KEY",
			environ:  []string{"LLM_KEY=k-123456"},
			wantKind: "openai", wantModel: "yes", wantKeyName: "LLM_KEY", wantURL: "https://llm.example.com/v1",
		},
		{
			name: "no kind: inferred", environ: []string{"OPENAI_API_KEY=" + openAIKey},
			wantKind: "openai", wantModel: "gpt-4o-mini", wantKeyName: "OPENAI_API_KEY", wantURL: "https://api.openai.com/v1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmpl := InitTemplate(tt.kind, tt.model, tt.baseURL, tt.apiKeyEnv)
			c, err := load(t, map[string]string{FileConfig: string(tmpl)}, tt.environ...)
			if err != nil {
				t.Fatalf("Load(template): %v\n%s", err, tmpl)
			}
			p := c.Provider
			if p.Kind != tt.wantKind || p.Model != tt.wantModel || p.APIKeyEnv != tt.wantKeyName || p.BaseURL != tt.wantURL {
				t.Errorf("provider = %+v", p)
			}

			// Every documented default is the real default: setting them
			// all changes nothing.
			all, err := load(t, map[string]string{FileConfig: string(uncomment(tmpl))}, tt.environ...)
			if err != nil {
				t.Fatalf("Load(uncommented template): %v\n%s", err, uncomment(tmpl))
			}
			all.Home, all.Workspace = c.Home, strings.Replace(all.Workspace, all.Home, c.Home, 1)
			if diff := cmp.Diff(c, all, ignoreUnexported, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("documented defaults differ from the defaults (-defaults +documented):\n%s", diff)
			}
		})
	}
}

// TestInitTemplateDocumentsEveryKey checks that the template, all settings
// uncommented, names every key of Config.
func TestInitTemplateDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := yaml.Unmarshal(uncomment(InitTemplate("anthropic", "", "", "")), &doc); err != nil {
		t.Fatal(err)
	}
	var missing []string
	var walk func(typ reflect.Type, m map[string]any, prefix string)
	walk = func(typ reflect.Type, m map[string]any, prefix string) {
		for name, i := range yamlFields(typ) {
			key := joinKey(prefix, name)
			v, ok := m[name]
			if !ok {
				missing = append(missing, key)
				continue
			}
			if ft := typ.Field(i).Type; ft.Kind() == reflect.Struct && ft != durationType {
				sub, _ := v.(map[string]any)
				walk(ft, sub, key)
			}
		}
	}
	walk(reflect.TypeFor[Config](), doc, "")
	// The template shows fallback as an empty list; its entries take
	// provider's keys, documented there.
	if len(missing) > 0 {
		t.Errorf("keys the template does not document: %q", missing)
	}
}

func TestYAMLString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "yes", "123", "a: b", "#x", "- x", "it's", `"q"`, "multi\nline", "tab\there", "~", "null", "  pad  "} {
		var back struct {
			V string `yaml:"v"`
		}
		if err := yaml.Unmarshal([]byte("v: "+yamlString(s)), &back); err != nil || back.V != s {
			t.Errorf("yamlString(%q) = %q reads back as %q, %v", s, yamlString(s), back.V, err)
		}
	}
}
