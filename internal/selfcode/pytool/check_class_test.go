package pytool

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckRefusesClassCreation: the class statements that run the tool's own code, or
// choose a module, at import. Each was a checker miss: the first case printed during
// import, and module= with enum.global_enum rewrote the runner's globals.
func TestCheckRefusesClassCreation(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, tc := range []struct {
		name, code, want string
	}{
		// Enum's metaclass calls the class's own methods for each member, at import.
		{"reported: Enum __init__ runs at import", "import enum\n\n\nclass E(enum.Enum):\n    A = 1\n\n    def __init__(self, v):\n        print(v)\n",
			"E is an Enum: its metaclass calls the class's own underscore methods"},
		{"IntEnum from enum import", "from enum import IntEnum\n\n\nclass E(IntEnum):\n    A = 1\n\n    def __eq__(self, o):\n        return True\n",
			"E is an Enum"},
		{"Flag _missing_", "import enum\n\n\nclass F(enum.Flag):\n    A = 1\n\n    def _missing_(self, v):\n        return None\n",
			"F is an Enum"},
		{"Enum __call__ (callable members)", "import enum\n\n\nclass E(enum.Enum):\n    def __call__(self):\n        return 1\n",
			"E is an Enum"},
		{"Enum _generate_next_value_", "import enum\n\n\nclass E(enum.Enum):\n    def _generate_next_value_(name, start, count, last):\n        return 1\n",
			"E is an Enum"},
		{"member-less Enum base with __init__, members in a subclass", "import enum\n\n\nclass Base(enum.Enum):\n    def __init__(self, v):\n        self.v = v\n\n\nclass E(Base):\n    A = 1\n",
			"Base is an Enum"},
		{"a mixin of this file", "import enum\n\n\nclass M:\n    def __init__(self, *a):\n        print(a)\n\n\nclass E(M, enum.Enum):\n    A = 1\n",
			"E is an Enum: its members are made at import, running the methods of the class M"},
		{"a class inside an Enum", "import enum\n\n\nclass E(enum.Enum):\n    A = 1\n\n    class Inner:\n        pass\n",
			"a class inside it would be made a member"},
		{"a base the checker cannot resolve", "import typing\n\n\nclass X(typing.Optional):\n    pass\n",
			"the checker cannot tell what the base typing.Optional is"},
		{"a constant as a base", "\nBASE = 1\n\n\nclass X(BASE):\n    pass\n",
			"the checker cannot tell what the base BASE is"},
		{"a base defined later", "\nclass X(Y):\n    pass\n\n\nclass Y:\n    pass\n",
			"the checker cannot tell what the base Y is"},

		// A string choosing a module: module= and qualname=, and the writer itself.
		{"reported: Enum functional API with module=", "import enum\n\n\ndef helper():\n    m = \"_\" + \"_main_\" + \"_\"\n    return enum.Enum(\"X\", [(\"_dumps\", 1)], module=m)\n",
			"the keyword module= is not allowed"},
		{"qualname=", "import enum\n\n\ndef helper():\n    return enum.Enum(\"X\", \"A\", qualname=\"Y\")\n",
			"the keyword qualname= is not allowed"},
		{"namedtuple module=", "import collections\n\n\ndef helper():\n    return collections.namedtuple(\"P\", \"x\", module=\"json\")\n",
			"the keyword module= is not allowed"},
		{"make_dataclass module=", "import dataclasses\n\n\ndef helper():\n    return dataclasses.make_dataclass(\"P\", [\"x\"], module=\"json\")\n",
			"the keyword module= is not allowed"},
		{"functional API of an Enum of this file", "import enum\n\n\nclass Base(enum.Enum):\n    pass\n\n\ndef helper():\n    return Base(\"X\", \"A\", module=\"json\")\n",
			"the keyword module= is not allowed"},
		{"module= passed on by a function of this file", "import enum\n\n\ndef make(**kw):\n    return enum.Enum(\"X\", \"A\", **kw)\n\n\ndef helper():\n    return make(module=\"json\")\n",
			"the keyword module= is not allowed"},
		{"a function of this file rebound to Enum", "import enum\n\n\ndef make(module):\n    return module\n\n\ndef helper():\n    make = enum.Enum\n    return make(\"X\", \"A\", module=\"json\")\n",
			"the keyword module= is not allowed"},
		{"reported: enum.global_enum", "import enum\n\n\ndef helper(x):\n    return enum.global_enum(x)\n",
			"enum.global_enum is not allowed: it reaches a module by a name it is given"},
		{"global_enum imported by name", "from enum import global_enum\n", "enum.global_enum is not allowed"},

		// super(): only super().__protocol__(...), the parent's own method, called.
		{"two-argument super", "\nclass A(ValueError):\n    def __init__(self):\n        super(A, self).__init__('x')\n",
			"__init__: dunder names are not allowed"},
		{"super() stored", "\nclass A(ValueError):\n    def __init__(self):\n        s = super()\n        s.__init__('x')\n",
			"__init__: dunder names are not allowed"},
		{"super().__init__ not called", "\nclass A(ValueError):\n    def __init__(self):\n        f = super().__init__\n        f('x')\n",
			"__init__: dunder names are not allowed"},
		{"super() of a dunder outside the protocol list", "\nclass A:\n    def m(self):\n        return super().__init_subclass__()\n",
			"__init_subclass__: dunder names are not allowed"},
		{"super() attribute of the result", "\nclass A:\n    def m(self):\n        return super().__repr__().__class__\n",
			"__class__: dunder names are not allowed"},
		{"super rebound", "\n\ndef helper(x):\n    super = x\n    return super().__init__()\n",
			"super may not be rebound"},
		{"super as a parameter", "\n\ndef helper(super):\n    return super().__init__()\n",
			"super may not be rebound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := checkedWithCache(t, "word_count", []byte(header+tc.code), []byte(goodTest))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want a *CheckError", err)
			}
			for _, p := range ce.Problems {
				if strings.Contains(p.Message, tc.want) {
					return
				}
			}
			t.Errorf("no problem containing %q; got:\n%v", tc.want, err)
		})
	}
}

// classesTool is what the class rules leave alone: plain Enums with literal members and
// public methods (an Enum base without members, a str mixin, Flag), NamedTuple and
// TypedDict, an ABC, exceptions, and an HTMLParser subclass calling super().__init__().
const classesTool = `import collections.abc
import enum
import html.parser
import json
import typing
from enum import IntEnum

DESCRIPTION = "The links of a page, and some classes."
PARAMS_SCHEMA = {"type": "object", "properties": {"page": {"type": "string"}}, "required": ["page"]}
CAPABILITIES = {}


class Color(enum.Enum):
    """Colors."""
    RED = 1
    GREEN = 2

    def label(self):
        return self.name.lower()


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Perm(enum.Flag):
    R = 4
    W = 2


class Described(enum.Enum):
    def describe(self):
        return "%s=%s" % (self.name, self.value)


class Size(str, Described):
    SMALL = "s"


class Point(typing.NamedTuple):
    x: int
    y: int = 0

    def norm(self):
        return abs(self.x) + abs(self.y)


class Row(typing.TypedDict):
    a: int


class Frozen(collections.abc.Mapping):
    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        return self.d[k]

    def __len__(self):
        return len(self.d)

    def __iter__(self):
        return iter(self.d)


class PageError(ValueError):
    def __init__(self, why):
        super().__init__("bad page: " + why)


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.found.extend(v for k, v in attrs if k == "href")

    def __repr__(self):
        return "Links(%d) %s" % (len(self.found), super().__repr__()[:1])


class Outer:
    class Inner:
        pass

    class Child(Inner):
        pass


def locate(module, qualname=""):
    return module + ".py" + qualname


def run(page):
    if not page:
        raise PageError("empty")
    p = Links()
    p.feed(page)
    p.close()
    mood = enum.Enum("Mood", "HAPPY SAD")
    return json.dumps({
        "links": p.found, "repr": repr(p), "color": Color.RED.label(), "level": Level.LOW + 1,
        "perm": (Perm.R | Perm.W).value, "size": Size.SMALL.describe(), "norm": Point(3, -4).norm(),
        "frozen": Frozen({"a": 1})["a"], "mood": mood.SAD.value, "row": Row(a=1),
    })
`

const classesTest = `import json
from classes import Color, PageError, locate, run


class Wrapped(PageError):
    pass


def test_links():
    out = json.loads(run('<p><a href="https://example.com/a">a</a> <a href="/b">b</a></p>'))
    assert out["links"] == ["https://example.com/a", "/b"]
    assert out["repr"] == "Links(2) <"
    assert out["color"] == "red" and out["level"] == 2 and out["perm"] == 6
    assert out["size"] == "SMALL=s" and out["norm"] == 7 and out["mood"] == 2


def test_own_module_parameter():
    assert locate(module="json") == "json.py"


def test_error():
    try:
        raise Wrapped("x")
    except ValueError as e:
        assert str(e) == "bad page: x"
    assert Color.GREEN.label() == "green"
`
