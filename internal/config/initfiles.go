package config

import (
	"os"
	"path/filepath"
)

// InitFiles is what `shelldon init` writes to a home, checked before any of
// it is written.
type InitFiles struct {
	home   string
	config []byte // config.yaml
	env    []byte // .env; nil: unchanged
	cfg    *Config
}

// PrepareInit renders config.yaml for a provider (InitTemplate) and, when
// secrets is not empty, the home's .env with them set, and loads the two as
// the home's config, on its own (an existing config.local.yaml is left out;
// init writes config.yaml only). Whether the key variable is set is not
// checked: init may run before the owner has the key. Nothing is written.
func PrepareInit(home string, environ []string, kind, model, baseURL, apiKeyEnv string, secrets map[string]string) (*InitFiles, error) {
	f := &InitFiles{home: home, config: InitTemplate(kind, model, baseURL, apiKeyEnv)}
	if len(secrets) > 0 {
		env, err := envWith(home, secrets, nil)
		if err != nil {
			return nil, err
		}
		f.env = env
	}
	cfg, err := loadWith(home, environ, candidate{config: f.config, overlay: []byte{}, env: f.env, keysUnset: true})
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return f, nil
}

// Config is the config the files make, loaded as PrepareInit checked it:
// its provider with the defaults applied, and the secrets of the
// environment and of the .env about to be written (or the one there).
func (f *InitFiles) Config() *Config { return f.cfg }

// Write creates the home and its workspace directory (mode 0700) and writes
// .env, then config.yaml, atomically with mode 0600; if config.yaml cannot
// be written, .env is put back as it was.
func (f *InitFiles) Write(workspace string) error {
	if err := os.MkdirAll(filepath.Join(f.home, workspace), 0o700); err != nil {
		return &Error{File: f.home, Msg: "cannot create the home: " + errText(err)}
	}
	if err := os.Chmod(f.home, 0o700); err != nil {
		return &Error{File: f.home, Msg: "cannot make the home private (chmod 700): " + errText(err)}
	}
	return writeEnvThen(f.home, f.env, filepath.Join(f.home, FileConfig), f.config)
}
