package starlarktool

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const wordCount = `DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}            # e.g. {"http": ["api.open-meteo.com"]}

def run(text):
    return str(len(text.split()))
`

const usdToINR = `"""Converts US dollars to Indian rupees at a fixed rate."""

DESCRIPTION = ("Convert an amount in US dollars to Indian rupees " +
               "at a fixed rate of " + "83.2 INR per USD.")
PARAMS_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "number", "minimum": 0, "description": "US dollars"},
    },
    "required": ["amount"],
    "additionalProperties": False,
}
CAPABILITIES = {}
RATE = 83.2
_DIGITS = 2

def run(amount):
    return "%s INR" % round_to(amount * RATE, _DIGITS)

def round_to(x, digits):
    scale = [1, 10, 100, 1000][digits]
    return int(x * scale + 0.5) / scale
`

const slugify = `DESCRIPTION = "Turn a title into a URL slug."
PARAMS_SCHEMA = {"type": "object", "properties": {"title": {"type": "string", "maxLength": 1000}}, "required": ["title"]}
ALLOWED = "abcdefghijklmnopqrstuvwxyz" + "0123456789"
SEPARATORS = [" ", "-", "_", ".", "/"]

def min(a, b):  # shadows the built-in, which is fine
    return a if a < b else b

def run(title):
    out = []
    for c in title.lower().elems():
        if c in ALLOWED:
            out.append(c)
        elif c in SEPARATORS and out and out[-1] != "-":
            out.append("-")
    slug = "".join(out).strip("-")
    return slug[:min(len(slug), 80)]
`

const optionalParams = `DESCRIPTION = "Split a text into at most limit pieces."
PARAMS_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "sep": {"type": "string", "default": " "},
        "limit": {"type": "integer", "minimum": 1},
        "upper": {"type": "boolean"},
        "extra": {"type": ["string", "null"]},
    },
    "required": ["text"],
}

def run(text, sep = " ", limit = -1, upper = False, *, extra = None):
    parts = text.split(sep, limit)
    if upper:
        parts = [p.upper() for p in parts]
    return parts
`

const weather = `DESCRIPTION = "Current temperature at a place."
PARAMS_SCHEMA = {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"]}
CAPABILITIES = {"http": ["api.open-meteo.com", "geocoding-api.open-meteo.com"]}

def run(lat, lon):
    r = http.get("https://api.open-meteo.com/v1/forecast?latitude=%s&longitude=%s&current=temperature_2m" % (lat, lon))
    if r.status != 200:
        fail("open-meteo answered", r.status)
    return parse(r.body)

def parse(body):
    return "%s °C" % json.decode(body)["current"]["temperature_2m"]
`

func TestInspectAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		code string
		want Meta
	}{
		{"word count", wordCount, Meta{
			Description:  "Count the words in a text.",
			ParamsSchema: []byte(`{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`),
			Capabilities: map[string][]string{},
		}},
		{"usd to inr", usdToINR, Meta{
			Description:  "Convert an amount in US dollars to Indian rupees at a fixed rate of 83.2 INR per USD.",
			ParamsSchema: []byte(`{"additionalProperties":false,"properties":{"amount":{"description":"US dollars","minimum":0,"type":"number"}},"required":["amount"],"type":"object"}`),
			Capabilities: map[string][]string{},
		}},
		{"slugify", slugify, Meta{
			Description:  "Turn a title into a URL slug.",
			ParamsSchema: []byte(`{"properties":{"title":{"maxLength":1000,"type":"string"}},"required":["title"],"type":"object"}`),
			Capabilities: map[string][]string{},
		}},
		{"optional params", optionalParams, Meta{
			Description:  "Split a text into at most limit pieces.",
			ParamsSchema: []byte(`{"properties":{"extra":{"type":["string","null"]},"limit":{"minimum":1,"type":"integer"},"sep":{"default":" ","type":"string"},"text":{"type":"string"},"upper":{"type":"boolean"}},"required":["text"],"type":"object"}`),
			Capabilities: map[string][]string{},
		}},
		{"http", weather, Meta{
			Description:  "Current temperature at a place.",
			ParamsSchema: []byte(`{"properties":{"lat":{"type":"number"},"lon":{"type":"number"}},"required":["lat","lon"],"type":"object"}`),
			Capabilities: map[string][]string{"http": {"api.open-meteo.com", "geocoding-api.open-meteo.com"}},
		}},
		{"no parameters, no CAPABILITIES, html in schema, an emoji", `DESCRIPTION = "Say <hi> & bye ❤️."
PARAMS_SCHEMA = {"type": "object", "description": "<none> & nothing"}
def run():
    return "hi"
`, Meta{
			Description:  "Say <hi> & bye ❤️.",
			ParamsSchema: []byte(`{"description":"<none> & nothing","type":"object"}`),
			Capabilities: map[string][]string{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Inspect([]byte(tt.code))
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("string", func(b []byte) string { return string(b) })); diff != "" {
				t.Errorf("Meta (-want +got):\n%s", diff)
			}
		})
	}
}

// mkTool assembles a tool around the given parts.
func mkTool(description, schema, extra, run string) string {
	return "DESCRIPTION = " + description + "\nPARAMS_SCHEMA = " + schema + "\n" + extra + "\n" + run
}

const (
	okDesc   = `"Count the words."`
	okSchema = `{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`
	okRun    = "def run(text):\n    return str(len(text.split()))\n"
)

func withCaps(caps string) string { return mkTool(okDesc, okSchema, "CAPABILITIES = "+caps, okRun) }

func TestInspectRefuses(t *testing.T) {
	t.Parallel()
	hosts21 := make([]string, 21)
	for i := range hosts21 {
		hosts21[i] = `"h` + strings.Repeat("x", i) + `.example.com"`
	}
	tests := []struct {
		name, code string
		want       []string // substrings of the error
	}{
		{"load", `load("lib.star", "helper")` + "\n" + wordCount, []string{"line 1:1: load is not available", "predeclared"}},
		{"zero-width space", strings.Replace(wordCount, "Count", "Co\u200bunt", 1), []string{"line 1:18:", "U+200B", "ZERO WIDTH SPACE"}},
		{"right-to-left override", wordCount + "# \u202e}\n", []string{"line 7:3:", "U+202E", "bidirectional"}},
		{"left-to-right isolate", strings.Replace(wordCount, "return", "return \u2066", 1), []string{"U+2066", "bidirectional"}},
		{"byte-order mark", "\ufeff" + wordCount, []string{"line 1:1:", "U+FEFF"}},
		{"soft hyphen", strings.Replace(wordCount, "text.split", "te\u00adxt.split", 1), []string{"U+00AD", "soft hyphen"}},
		{"hangul filler identifier", strings.Replace(wordCount, "def run(text):", "def run(text, \u3164=1):", 1), []string{"U+3164", "invisible filler"}},
		{"several hidden", "\u200b\u200b" + wordCount, []string{"line 1:1:", "(2 such characters in all)"}},
		{"variation selectors hiding text", strings.Replace(wordCount, "a text.", "a text.\U0001F600\ufe0f\ufe0f", 1), []string{"line 1:44:", "variation selector U+FE0F"}},
		{"variation selector supplement", strings.Replace(wordCount, "a text.", "a text.\U000E0101", 1), []string{"variation selector U+E0101"}},
		{"variation selector after ASCII", strings.Replace(wordCount, "a text.", "a text.\ufe0f", 1), []string{"variation selector U+FE0F"}},
		{"tag characters", strings.Replace(wordCount, "a text.", "a text.\U000E0041", 1), []string{"invisible format character U+E0041"}},
		{"control character", strings.Replace(wordCount, "words", "wo\x1brds", 1), []string{"U+001B", "control character"}},
		{"line separator", wordCount + "#\u2028\n", []string{"U+2028"}},
		{"invalid UTF-8", wordCount + "# \xff\n", []string{"line 7:3: invalid UTF-8"}},
		{"too big", wordCount + "#" + strings.Repeat("x", MaxSource) + "\n", []string{"the limit is 65536"}},
		{"syntax error", wordCount + "def (:\n", []string{"line 7:6: syntax error"}},
		{"schema from a call", mkTool(okDesc, `json.decode('{"type": "object"}')`, "", okRun),
			[]string{"line 2:17: PARAMS_SCHEMA must be a literal dict", "found a call to json.decode"}},
		{"schema with a comprehension", mkTool(okDesc, `{"type": "object", "properties": {k: {"type": "string"} for k in ["text"]}, "required": ["text"]}`, "", okRun),
			[]string{"line 2:50: PARAMS_SCHEMA must be a literal dict", "found a comprehension"}},
		{"schema from a variable", mkTool(okDesc, "SCHEMA", "SCHEMA = "+okSchema, okRun), []string{"line 2:17:", "found the variable SCHEMA"}},
		{"schema in a variable", mkTool(okDesc, `{"type": "object", "properties": PROPS}`, `PROPS = {"text": {"type": "string"}}`, okRun), []string{"found the variable PROPS"}},
		{"schema a list", mkTool(okDesc, `["text"]`, "", okRun), []string{"PARAMS_SCHEMA must be a literal dict; found a list"}},
		{"schema not an object", mkTool(okDesc, `{"type": "string"}`, "", okRun), []string{`must have "type": "object"`, `found "string"`}},
		{"schema without type", mkTool(okDesc, `{"properties": {"text": {}}}`, "", okRun), []string{`must have "type": "object"`, "found no type"}},
		{"invalid schema", mkTool(okDesc, `{"type": 5}`, "", okRun), []string{"PARAMS_SCHEMA is not a valid JSON Schema"}},
		{"invalid nested schema", mkTool(okDesc, `{"type": "object", "properties": {"text": {"type": "strnig"}}, "required": ["text"]}`, "", okRun), []string{`PARAMS_SCHEMA is not a valid JSON Schema: the type "strnig" at /properties/text is not a JSON type`}},
		{"invalid schema deep in items", mkTool(okDesc, `{"type": "object", "properties": {"text": {"type": "array", "items": {"type": "str"}}}, "required": ["text"]}`, "", okRun), []string{`"str" at /properties/text/items`}},
		{"schema with int keys", mkTool(okDesc, `{"type": "object", 1: 2}`, "", okRun), []string{"JSON object keys must be strings"}},
		{"schema with a bad default", mkTool(okDesc, `{"type": "object", "properties": {"text": {"type": "string", "default": 3}}}`, "", "def run(text=\"\"):\n    return text\n"), []string{"not a valid JSON Schema"}},
		{"unsupported $schema", mkTool(okDesc, `{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}`, "", "def run():\n    return 1\n"), []string{"$schema", "leave $schema out"}},
		{"property not a parameter", mkTool(okDesc, `{"type": "object", "properties": {"text": {"type": "string"}, "lang": {"type": "string"}}, "required": ["text"]}`, "", okRun),
			[]string{`line 2:17: PARAMS_SCHEMA has the property "lang", but run has no such parameter (run's parameters are text)`}},
		{"parameter not a property", mkTool(okDesc, okSchema, "", "def run(text, n = 3):\n    return text * n\n"),
			[]string{"line 4:15: run's parameter n is not in PARAMS_SCHEMA's properties"}},
		{"parameter not required", mkTool(okDesc, `{"type": "object", "properties": {"text": {"type": "string"}}}`, "", okRun),
			[]string{`line 4:9: run's parameter text has no default, so PARAMS_SCHEMA must list it in "required"`}},
		{"required not a parameter", mkTool(okDesc, `{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text", "other"]}`, "", okRun),
			[]string{`PARAMS_SCHEMA requires "other", but run has no such parameter`}},
		{"star args", mkTool(okDesc, okSchema, "", "def run(text, *rest):\n    return text\n"), []string{"line 4:15: run may not take *rest"}},
		{"star star kwargs", mkTool(okDesc, okSchema, "", "def run(text, **kw):\n    return text\n"), []string{"run may not take **kw"}},
		{"missing run", mkTool(okDesc, okSchema, "", "def main(text):\n    return text\n"), []string{"run is not defined"}},
		{"run is a lambda", mkTool(okDesc, okSchema, "", "RUN = lambda text: text\n"), []string{"found a lambda"}},
		{"description computed", mkTool(`"count words".upper()`, okSchema, "", okRun),
			[]string{"line 1:15: DESCRIPTION must be a string literal", `found a call to "count words".upper`}},
		{"description empty", mkTool(`""`, okSchema, "", okRun), []string{"line 1:15: DESCRIPTION is empty"}},
		{"description blank", mkTool(`"  " + "\n"`, okSchema, "", okRun), []string{"DESCRIPTION is empty"}},
		{"description not a string", mkTool(`42`, okSchema, "", okRun), []string{"DESCRIPTION must be a string; found a int"}},
		{"description too long", mkTool(`"`+strings.Repeat("é", 1025)+`"`, okSchema, "", okRun), []string{"DESCRIPTION is 1025 characters; the limit is 1024"}},
		{"description bytes", mkTool(`b"count"`, okSchema, "", okRun), []string{"found a bytes literal"}},
		{"description missing", "PARAMS_SCHEMA = " + okSchema + "\n" + okRun, []string{"DESCRIPTION is not defined"}},
		{"schema missing", "DESCRIPTION = " + okDesc + "\n" + okRun, []string{"PARAMS_SCHEMA is not defined"}},
		{"unknown capability", withCaps(`{"fs": ["/etc"]}`), []string{`line 3:17: unknown capability "fs"; the only capability is "http"`}},
		{"capabilities not a dict", withCaps(`["http"]`), []string{"CAPABILITIES must be a literal dict"}},
		{"http not a list", withCaps(`{"http": "api.example.com"}`), []string{`CAPABILITIES["http"] must be a list of hostnames`}},
		{"http empty", withCaps(`{"http": []}`), []string{`CAPABILITIES["http"] is empty`}},
		{"ip address", withCaps(`{"http": ["93.184.216.34"]}`), []string{`line 3:26: CAPABILITIES["http"] host "93.184.216.34" is an IP address`}},
		{"ipv6 address", withCaps(`{"http": ["::1"]}`), []string{"is an IP address"}},
		{"bracketed ipv6", withCaps(`{"http": ["[::1]"]}`), []string{"is an IP address"}},
		{"octal-ish ip", withCaps(`{"http": ["127.1"]}`), []string{"looks like one"}},
		{"wildcard", withCaps(`{"http": ["*.example.com"]}`), []string{"is a wildcard"}},
		{"port", withCaps(`{"http": ["api.example.com:8443"]}`), []string{"with a port; ports are not allowed"}},
		{"url", withCaps(`{"http": ["https://api.example.com/v1"]}`), []string{"is a URL, not a hostname"}},
		{"uppercase", withCaps(`{"http": ["API.example.com"]}`), []string{`not lowercase; write "api.example.com"`}},
		{"single label", withCaps(`{"http": ["localhost"]}`), []string{"not a fully qualified DNS name"}},
		{"unicode host", withCaps(`{"http": ["bücher.example"]}`), []string{"xn--"}},
		{"hyphen label", withCaps(`{"http": ["-api.example.com"]}`), []string{"starts or ends with a hyphen"}},
		{"duplicate host", withCaps(`{"http": ["a.example.com", "a.example.com"]}`), []string{"twice"}},
		{"too many hosts", withCaps(`{"http": [` + strings.Join(hosts21, ", ") + `]}`), []string{"lists 21 hosts; the limit is 20"}},
		{"top-level print", wordCount + `print("x")` + "\n", []string{"line 7:1: top-level code is not allowed: found a call to print"}},
		{"top-level call in a constant", wordCount + `X = run("a b")` + "\n", []string{"line 7:5: X must be a literal", "found a call to run"}},
		{"top-level lowercase variable", wordCount + "rate = 83.2\n", []string{"line 7:1: the top-level name rate must be an UPPERCASE constant"}},
		{"top-level for", wordCount + "for i in range(3):\n    pass\n", []string{"line 7:1: a top-level for loop is not allowed"}},
		{"top-level if", wordCount + "if True:\n    X = 1\n", []string{"a top-level if statement is not allowed"}},
		{"top-level while", wordCount + "while True:\n    pass\n", []string{"while loops are not available"}},
		{"while in a function", wordCount + "def spin():\n    while True:\n        pass\n", []string{"line 8:5:", "while"}},
		{"tuple assignment", wordCount + "A, B = 1, 2\n", []string{"assign one top-level name per statement"}},
		{"augmented assignment", wordCount + "X = 1\nX += 1\n", []string{"line 8:3: a top-level += assignment is not allowed"}},
		{"reassigned constant", wordCount + "X = 1\nX = 2\n", []string{"line 8:1:", "cannot reassign"}},
		{"long callee", wordCount + "X = a.b.c.d.e.f(1)\n", []string{"found a call to ...b.c.d.e.f"}},
		{"method on a call", wordCount + "X = json.decode(\"1\").get(1)\n", []string{"found a call to json.decode(...).get"}},
		{"long literal callee", wordCount + "X = \"" + strings.Repeat("x", 100) + "\".upper()\n", []string{"found a call to \"" + strings.Repeat("x", 39) + "....upper;"}},
		{"string repetition", wordCount + `X = "a" * 100` + "\n", []string{"found an expression with the operator *"}},
		{"list concatenation", wordCount + `X = [1] + [2]` + "\n", []string{"only string literals may be joined"}},
		{"duplicate dict key", wordCount + `X = {"a": 1, "a": 2}` + "\n", []string{`line 7:14: X must be a literal`, `the duplicate key "a"`}},
		{"unhashable dict key", wordCount + `X = {[1]: 2}` + "\n", []string{"cannot be a key"}},
		{"deep literal", wordCount + "X = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n", []string{"nested more than 32 levels"}},
		{"computed default", strings.Replace(wordCount, "def run(text):", "def run(text, n = len(\"ab\")):", 1),
			[]string{"line 5:19: the default of run's parameter n must be a literal", "found a call to len"}},
		{"undefined name", strings.Replace(wordCount, "text.split()", "splitter(text)", 1), []string{"line 6:20: undefined: splitter"}},
		{"self recursion", wordCount + "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n", []string{"line 8:32: fact calls itself; recursion is not available"}},
		{"def named True", wordCount + "def True():\n    return False\n", []string{"a function may not be named True"}},
		{"several problems, in order", mkTool(`""`, `{"type": "object"}`, "CAPABILITIES = {\"fs\": 1}", "def run(text):\n    return text\n"),
			[]string{"line 1:15: DESCRIPTION is empty; say what the tool does\nline 3:17: unknown capability \"fs\"", "line 4:9: run's parameter text is not in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Inspect([]byte(tt.code))
			if err == nil {
				t.Fatalf("Inspect accepted:\n%s", tt.code)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

// TestInspectNeverExecutes feeds Inspect code whose top level would loop
// forever or fail if it ran: it must refuse promptly, never run it.
func TestInspectNeverExecutes(t *testing.T) {
	t.Parallel()
	for _, code := range neverRun {
		done := make(chan error, 1)
		go func() {
			_, err := Inspect([]byte(code))
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("Inspect accepted:\n%s", code)
			} else if strings.Contains(err.Error(), "executed") && !strings.Contains(err.Error(), "found a call to fail") {
				t.Errorf("Inspect ran the code: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Inspect did not return; it must be running:\n%s", code)
		}
	}
}

// neverRun are tools whose load would never end, or fail, if executed.
var neverRun = []string{
	wordCount + "for i in range(1 << 62):\n    pass\n",
	wordCount + "while True:\n    pass\n",
	wordCount + "X = [i for i in range(1 << 62)]\n",
	wordCount + `X = fail("executed")` + "\n",
	wordCount + `fail("executed")` + "\n",
	wordCount + "def spin(n = [i for i in range(1 << 62)]):\n    pass\n",
	strings.Replace(wordCount, "def run(text):", `def run(text, x = fail("executed")):`, 1),
	strings.Replace(wordCount, `"Count the words in a text."`, `fail("executed")`, 1),
	strings.Replace(wordCount, "CAPABILITIES = {}", `CAPABILITIES = {"http": [fail("executed")]}`, 1),
}

func TestCheckTest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, test string
		want       string // "" to accept
	}{
		{"ok", "def test_count():\n    assert.eq(run(\"a b\"), \"2\")\n", ""},
		{"ok with constants and helpers", "CASES = [(\"a\", \"1\"), (\"\", \"0\")]\nlimit = 3\n\ndef check(text, want):\n    assert.eq(run(text), want)\n\ndef test_cases():\n    for text, want in CASES:\n        check(text, want)\n", ""},
		{"no tests", "def check():\n    pass\n", "the test defines no test function"},
		{"test with parameters", "def test_x(a):\n    pass\n", "line 1:5: test_x takes parameters"},
		{"load", "load(\"assert.star\", \"assert\")\ndef test_x():\n    pass\n", "line 1:1: load is not available"},
		{"top-level call", "def test_x():\n    pass\nrun(\"x\")\n", "line 3:1: top-level code is not allowed: found a call to run"},
		{"computed constant", "X = run(\"x\")\ndef test_x():\n    pass\n", "line 1:5: X must be a literal"},
		{"hidden character", "def test_x():\n    pass # \u202e\n", "line 2:12: the bidirectional control RIGHT-TO-LEFT OVERRIDE U+202E"},
		{"while", "def test_x():\n    while True:\n        pass\n", "while"},
		{"too big", "def test_x():\n    pass\n#" + strings.Repeat("x", MaxSource), "the limit is 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckTest([]byte(tt.test))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckTest: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("CheckTest accepted:\n%s", tt.test)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error lacks %q:\n%v", tt.want, err)
			}
		})
	}
}
