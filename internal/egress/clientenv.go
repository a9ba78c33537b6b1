package egress

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ClientEnv points commands at the proxy on their loopback's port: the
// variables most clients read, and the settings of the tools that read their
// own, replacing those env has (the host's proxy is shellgate's to use, not
// the commands').
func ClientEnv(env []string, proxyPort int) []string {
	port := strconv.Itoa(proxyPort)
	httpProxy, socks := "http://127.0.0.1:"+port, "socks5h://127.0.0.1:"+port
	noProxy := "localhost,127.0.0.1,::1"
	set := map[string]string{
		"HTTP_PROXY": httpProxy, "HTTPS_PROXY": httpProxy, "ALL_PROXY": socks, "NO_PROXY": noProxy,
		"http_proxy": httpProxy, "https_proxy": httpProxy, "all_proxy": socks, "no_proxy": noProxy,
		// npm reads its own settings before the environment's proxies.
		"npm_config_proxy": httpProxy, "npm_config_https_proxy": httpProxy, "npm_config_noproxy": noProxy,
		"YARN_HTTP_PROXY": httpProxy, "YARN_HTTPS_PROXY": httpProxy,
		"PIP_PROXY":        httpProxy,
		"CARGO_HTTP_PROXY": httpProxy,
		// GOPROXY stays as it is: go honours HTTPS_PROXY.
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := set[k]
		return ok
	})
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	// git: http.proxy through GIT_CONFIG_COUNT, after the ones already given.
	n := 0
	for _, kv := range out {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") })
	return append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=http.proxy", n), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, httpProxy),
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", n+1))
}
