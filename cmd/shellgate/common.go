package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
)

// commonFlags are the flags every command that builds a Gate shares.
type commonFlags struct {
	root         string
	configFile   string
	allowNetwork bool
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.root, "root", "", "project root (default: the current directory)")
	fs.StringVar(&c.configFile, "config", "", "configuration file (TOML), read after the user config and <root>/.shellgate.toml")
	fs.BoolVar(&c.allowNetwork, "allow-network", false, "allow network clients such as curl and git push (also BASH_ALLOW_NETWORK=true)")
}

// config loads the configuration files and applies the flags over them. Settings the
// files tried to set but may not (an untrusted project file loosening the policy) are
// reported on warnings.
func (c *commonFlags) config(warnings io.Writer) (shellgate.Config, error) {
	cfg, src, err := config.Load(config.LoadOptions{ConfigFile: c.configFile, Root: c.root})
	if err != nil {
		return cfg, err
	}
	for _, w := range src.Warnings {
		fmt.Fprintf(warnings, "shellgate: warning: %v\n", w)
	}
	if c.allowNetwork {
		cfg.Policy.Network = true
	}
	return cfg, nil
}
