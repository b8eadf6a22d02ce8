package caddymodule

import "strings"

// validKeyFormat reports whether key has the form <prefix>_live_<random>:
// a cheap check that turns away garbage before any hashing or lookup.
func validKeyFormat(key string) bool {
	prefix, random, ok := strings.Cut(key, "_live_")
	if !ok || prefix == "" || len(random) < 16 || len(key) > 256 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
