package config

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// DescribeHost shows the owner the host of rawURL in both its forms, so a
// look-alike is seen for what it is: "api.example.com" for a plain ASCII
// host; "xn--pi-6kc.example.com (Unicode: аpi.example.com): not plain
// ASCII" for an internationalized one, whichever form the URL used. No
// form is mapped to another name (idna.Punycode: no case folding, no
// width mapping), so what is shown is what the URL says.
func DescribeHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return "(no host)"
	}
	host := u.Hostname()
	ascii, errA := idna.Punycode.ToASCII(host)
	uni, errU := idna.Punycode.ToUnicode(host)
	if errA != nil || errU != nil {
		return strings.ToValidUTF8(host, "?") + " (not a valid host name)"
	}
	if ascii == uni && isPlainASCII(host) {
		return ascii
	}
	return ascii + " (Unicode: " + uni + "): not plain ASCII, look at each letter"
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
