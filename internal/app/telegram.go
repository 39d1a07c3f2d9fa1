package app

import (
	"fmt"

	"github.com/shelldon/shelldon/internal/transport/telegram"
)

// telegramBot is the Telegram transport when telegram.token_env names a set
// token, else nil.
func (a *App) telegramBot() (*telegram.Bot, error) {
	cfg := a.current()
	token := cfg.Secret(cfg.Telegram.TokenEnv)
	if token == "" {
		return nil, nil
	}
	opts := telegram.Options{
		Token: token, APIBase: cfg.Telegram.APIBase, AllowedUsers: cfg.Telegram.AllowedUsers,
		Core: a.Core, Audit: a.Core, Logger: a.Log, OffsetFile: cfg.Path("telegram_offset"),
		QueueDir: cfg.Path("telegram_queue"), Schedules: a,
		Status: func() string {
			c := a.current()
			return fmt.Sprintf("shelldon %s\nprovider: %s (%s)\nsandbox: %s", versionString(), c.Provider.Kind, c.Provider.Model, a.Tier)
		},
	}
	if cfg.Telegram.WebhookURL != "" {
		opts.Webhook = &telegram.WebhookOptions{URL: cfg.Telegram.WebhookURL, SecretToken: cfg.Secret(cfg.Telegram.WebhookSecretEnv)}
	}
	// New's errors name telegram already.
	return telegram.New(opts)
}

// noCore stands in for the core where the bot is only checked (doctor).
type noCore struct{ telegram.Core }
