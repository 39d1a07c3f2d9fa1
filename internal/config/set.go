package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
	"go.yaml.in/yaml/v3"
)

// settingSegment is one part of a dotted key: a name, and an index when
// the part is an element of a list ("fallback[1]").
type settingSegment struct {
	name  string
	index int // -1: not a list element
}

var settingSegmentRe lazy.Value[*regexp.Regexp]

func settingSegmentPattern() *regexp.Regexp {
	return settingSegmentRe.Get(func() *regexp.Regexp {
		return regexp.MustCompile(`^([a-z][a-z0-9_]*)(?:\[([0-9]{1,3})\])?$`)
	})
}

// SettingChange turns the owner's `shelldon config set KEY VALUE` into a
// change for PrepareOverlay, the settings API's path. KEY is dotted
// ("provider.base_url"); an element of a list is named by its index
// ("fallback[0].base_url"), and an index one past the end appends one.
// Lists replace as a whole, so setting inside one writes the whole list
// as cfg has it, with that element changed. VALUE is a YAML value ("25s",
// "8", "true", "[]", "{kind: openai, base_url: ..., model: m}", "null" for
// the default); an empty VALUE is the empty string. Whether the key exists
// and the value fits is for PrepareOverlay to say.
func SettingChange(cfg *Config, key, value string) (map[string]any, error) {
	var path []settingSegment
	for _, part := range strings.Split(key, ".") {
		m := settingSegmentPattern().FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("config: %q is not a config key (like provider.base_url or fallback[0].model)", key)
		}
		seg := settingSegment{name: m[1], index: -1}
		if m[2] != "" {
			seg.index, _ = strconv.Atoi(m[2])
		}
		path = append(path, seg)
	}
	var v any = ""
	if value != "" {
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return nil, fmt.Errorf("config: %s: the value is not valid YAML (quote it if it is text): %v", key, err)
		}
	}
	change, err := settingAt(cfg.Effective(), path, v, key)
	if err != nil {
		return nil, err
	}
	return change.(map[string]any), nil
}

// settingAt returns the change that sets path under cur (the effective
// value there) to v: nested maps down to the value, or down to a list,
// which is copied whole from cur with its element set.
func settingAt(cur any, path []settingSegment, v any, key string) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	seg := path[0]
	curMap, _ := cur.(map[string]any)
	child := curMap[seg.name]
	if seg.index < 0 {
		sub, err := settingAt(child, path[1:], v, key)
		if err != nil {
			return nil, err
		}
		return map[string]any{seg.name: sub}, nil
	}
	var list []any
	if child != nil {
		var ok bool
		if list, ok = child.([]any); !ok {
			return nil, fmt.Errorf("config: %s: %s is not a list", key, seg.name)
		}
	}
	if seg.index > len(list) {
		return nil, fmt.Errorf("config: %s: %s has %d entries; use an index up to %d (%d appends one)", key, seg.name, len(list), len(list), len(list))
	}
	list = deepCopy(list).([]any)
	var elem any
	if seg.index < len(list) {
		elem = list[seg.index]
	}
	elem, err := setIn(elem, path[1:], v, key)
	if err != nil {
		return nil, err
	}
	if seg.index == len(list) {
		list = append(list, elem)
	} else {
		list[seg.index] = elem
	}
	return map[string]any{seg.name: list}, nil
}

// setIn sets path inside cur (a copy, changed in place) to v and returns
// it: inside a list's element the whole element is written.
func setIn(cur any, path []settingSegment, v any, key string) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	seg := path[0]
	m, ok := cur.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	if seg.index < 0 {
		sub, err := setIn(m[seg.name], path[1:], v, key)
		if err != nil {
			return nil, err
		}
		m[seg.name] = sub
		return m, nil
	}
	change, err := settingAt(m, path, v, key)
	if err != nil {
		return nil, err
	}
	m[seg.name] = change.(map[string]any)[seg.name]
	return m, nil
}

// deepCopy copies the maps and lists of a decoded YAML value.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
