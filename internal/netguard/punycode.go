package netguard

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Punycode (RFC 3492) with the IDNA parameters, for one label without its
// xn-- prefix. Inputs are bounded by the callers (a label is at most a few
// hundred bytes), and the arithmetic checks for overflow anyway.

const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	pcMaxInt      = 1<<31 - 1
	pcMaxLen      = 1024 // far above a 63-byte label; keeps the cost linear-ish
)

var errPunycode = errors.New("punycode: invalid input")

func pcAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

func pcThreshold(k, bias int) int {
	t := k - bias
	if t < pcTMin {
		return pcTMin
	}
	if t > pcTMax {
		return pcTMax
	}
	return t
}

func pcEncodeDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func pcDecodeDigit(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c-'0') + 26, true
	case 'a' <= c && c <= 'z':
		return int(c - 'a'), true
	case 'A' <= c && c <= 'Z':
		return int(c - 'A'), true
	}
	return 0, false
}

// punyEncode encodes s (valid UTF-8) to punycode.
func punyEncode(s string) (string, error) {
	if len(s) > pcMaxLen || !utf8.ValidString(s) {
		return "", errPunycode
	}
	runes := []rune(s)
	var out strings.Builder
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out.WriteByte(byte(r))
		}
	}
	b := out.Len()
	h := b
	if b > 0 {
		out.WriteByte('-')
	}
	n, delta, bias := pcInitialN, 0, pcInitialBias
	for h < len(runes) {
		m := pcMaxInt
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if (m - n) > (pcMaxInt-delta)/(h+1) {
			return "", errPunycode
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
				if delta > pcMaxInt {
					return "", errPunycode
				}
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := pcThreshold(k, bias)
				if q < t {
					break
				}
				out.WriteByte(pcEncodeDigit(t + (q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out.WriteByte(pcEncodeDigit(q))
			bias = pcAdapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return out.String(), nil
}

// punyDecode decodes punycode s to a UTF-8 string.
func punyDecode(s string) (string, error) {
	if len(s) > pcMaxLen {
		return "", errPunycode
	}
	var out []rune
	rest := s
	if pos := strings.LastIndexByte(s, '-'); pos > 0 {
		for i := 0; i < pos; i++ {
			if s[i] >= utf8.RuneSelf {
				return "", errPunycode
			}
			out = append(out, rune(s[i]))
		}
		rest = s[pos+1:]
	}
	i, n, bias := 0, pcInitialN, pcInitialBias
	for p := 0; p < len(rest); {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if p == len(rest) {
				return "", errPunycode
			}
			digit, ok := pcDecodeDigit(rest[p])
			p++
			if !ok || digit > (pcMaxInt-i)/w {
				return "", errPunycode
			}
			i += digit * w
			t := pcThreshold(k, bias)
			if digit < t {
				break
			}
			if w > pcMaxInt/(pcBase-t) {
				return "", errPunycode
			}
			w *= pcBase - t
		}
		size := len(out) + 1
		bias = pcAdapt(i-oldi, size, oldi == 0)
		if i/size > pcMaxInt-n {
			return "", errPunycode
		}
		n += i / size
		i %= size
		if n > utf8.MaxRune || (0xD800 <= n && n <= 0xDFFF) || n < pcInitialN {
			return "", errPunycode
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return string(out), nil
}
