package config

import (
	"errors"
	"slices"

	"github.com/shellgate/shellgate/internal/egress"
)

// networkTable is [network]: what commands may reach with the network off.
type networkTable struct {
	// Allow lists the domains (exact, or "*." for the subdomains), addresses
	// and presets ("registries") commands reach through shellgate's proxy:
	// allow-listed egress.
	Allow []string `toml:"allow"`
}

// network adds [network] allow. Each entry lets commands send data to one
// more place, so an untrusted project file may not add any.
func (m *merger) network(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	var add []string
	for i, e := range f.cfg.Network.Allow {
		if !egress.IsPreset(e) {
			if _, err := egress.ParseAllow([]string{e}); errors.Is(err, egress.ErrEmptyEntry) {
				return f.errorAt("network.allow", "entry %d is empty: want a host name, \"*.\" and a domain, an address, a prefix or the preset %q", i+1, egress.PresetRegistries)
			} else if err != nil {
				return f.errorAt("network.allow", "entry %d, %q: want a host name, \"*.\" and a domain, an address, a prefix or the preset %q", i+1, e, egress.PresetRegistries)
			}
		}
		if !slices.Contains(m.cfg.Network.Allow, e) && !slices.Contains(add, e) {
			add = append(add, e)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if !trusted {
		ignore("network.allow", "each domain allowed is a place commands can send the project to")
		return nil
	}
	m.cfg.Network.Allow = append(m.cfg.Network.Allow, add...)
	return nil
}
