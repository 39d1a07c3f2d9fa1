// Package telegram is shelldon's Telegram transport: a small Bot API client
// over net/http, long polling or a webhook, chat turns and one-tap approval
// cards. It reaches the agent only through the core's calls.
//
// It serves only the users in its allow list, checked on the sender of every
// message and every button press, never on the chat; a stranger sees no
// answer (a press is answered without text) and causes no core call.
// Everything the model or a tool wrote is HTML-escaped before it is sent,
// and a card shows only the daemon's rendering of a request. The bot token
// never appears in a log line or an error.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// Core is what the bot needs of the agent: turns, approvals and tools.
type Core interface {
	// SendOnce runs the turn of a message, once per key (see
	// core.Core.SendOnce): a message redelivered or taken up again after
	// a restart is not run twice.
	SendOnce(ctx context.Context, chat, key, text string, ev core.Events) (core.Outcome, error)
	Approvals(ctx context.Context) ([]core.ApprovalView, error)
	Decide(ctx context.Context, id string, approve bool, by string, ev core.Events) (core.Outcome, error)
	Tools(ctx context.Context) ([]core.ToolView, error)
}

// AuditReader reads the audit trail, for /audit.
type AuditReader interface {
	Audit(ctx context.Context, q core.AuditQuery) ([]core.AuditEntry, error)
}

// The daemon's core and store are what serve hands the bot.
var (
	_ Core        = (*core.Core)(nil)
	_ AuditReader = (*core.Core)(nil)
)

// Options configure a Bot.
type Options struct {
	Token        string  // the bot token from BotFather
	APIBase      string  // default https://api.telegram.org; the API is at <APIBase>/bot<token>/<method>
	AllowedUsers []int64 // Telegram user ids served; empty serves nobody
	Core         Core
	Audit        AuditReader    // nil: /audit says it is not available
	Schedules    ScheduleLister // nil: /schedules says they are not available
	Logger       *slog.Logger
	// HTTPClient makes the API calls; default a plain client. Each call has
	// its own timeout; a client Timeout must exceed PollTimeout.
	HTTPClient  *http.Client
	PollTimeout time.Duration // long polling timeout, whole seconds; default 30s
	// OffsetFile keeps the getUpdates offset across restarts (mode 0600);
	// "" keeps it in memory only.
	OffsetFile string
	// QueueDir keeps the work received and not yet done (see journal):
	// an update that asks for a turn or a decision is confirmed to
	// Telegram only once it is stored here. "" keeps it in memory only,
	// and a restart loses it.
	QueueDir string
	Status   func() string   // the text of /status; nil: a short default
	Webhook  *WebhookOptions // nil: long polling
}

// WebhookOptions switch the bot to webhook mode: Telegram posts updates to
// URL, which must reach Bot.Handler, with SecretToken in a header.
type WebhookOptions struct {
	URL         string
	SecretToken string // 1-256 of A-Z a-z 0-9 _ -; required
}

// Bot is a running Telegram transport. It is safe for concurrent use.
type Bot struct {
	opts    Options
	api     *client
	log     *slog.Logger
	allowed map[int64]bool

	pollTimeout time.Duration
	typingEvery time.Duration // how often the typing action is renewed during a turn
	ackWait     time.Duration // how long a press waits for Decide before it is answered anyway
	minBackoff  time.Duration
	maxBackoff  time.Duration

	journal  journal
	acceptMu sync.Mutex // one update at a time from receiving to its queue

	mu         sync.Mutex
	ctx        context.Context    // the turns' context, Run's; nil before Run
	cancelWork context.CancelFunc // cancels ctx
	stopRecv   context.CancelFunc // stops receiving; nil before Run
	done       chan struct{}      // closed when Run returns
	stopping   bool               // no new work is started
	username   string
	queues     map[int64]*queue             // chat id -> work waiting for its turn
	turns      map[int64]context.CancelFunc // chat id -> cancel of its running turn
	strangers  map[int64]bool               // user ids already logged
	carded     map[string]bool              // request ids shown as a card
	later      []func(ctx context.Context)  // deliveries asked for before Run
	seen       map[int64]bool               // recent update ids, against duplicates
	seenOrder  []int64
	wg         sync.WaitGroup
}

// queue holds a chat's work in arrival order.
type queue struct {
	msgs    []*work
	running bool
}

// work is a chat message waiting for its turn, under its update id in the
// journal.
type work struct {
	id int64
	m  *message
}

const (
	maxQueued     = 20   // messages waiting per chat; more are refused
	maxStrangers  = 1024 // distinct strangers logged
	maxSeen       = 512  // update ids remembered against duplicates
	secretHeader  = "X-Telegram-Bot-Api-Secret-Token"
	maxUpdateBody = 1 << 20
)

// New checks the options and returns a Bot; nothing is contacted until Run.
func New(opts Options) (*Bot, error) {
	if opts.Core == nil {
		return nil, errors.New("telegram: a core is required")
	}
	if !validToken(opts.Token) {
		return nil, errors.New("telegram: the bot token is missing or malformed (expected the form 123456:ABC-def from BotFather)")
	}
	if opts.APIBase == "" {
		opts.APIBase = "https://api.telegram.org"
	}
	if u, err := url.Parse(opts.APIBase); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("telegram: api_base must be an http(s) URL")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if w := opts.Webhook; w != nil {
		if w.URL == "" {
			return nil, errors.New("telegram: webhook mode needs a URL")
		}
		if err := checkWebhookURL(w.URL, opts.APIBase, opts.Logger); err != nil {
			return nil, err
		}
		if !validSecret(w.SecretToken) {
			return nil, errors.New("telegram: webhook mode needs a secret token of 1-256 characters A-Z, a-z, 0-9, _ or -")
		}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	poll := opts.PollTimeout
	if poll <= 0 {
		poll = 30 * time.Second
	}
	poll = max(poll.Round(time.Second), time.Second)
	b := &Bot{
		opts: opts, api: newClient(opts.APIBase, opts.Token, opts.HTTPClient), log: opts.Logger,
		allowed:     map[int64]bool{},
		pollTimeout: poll, typingEvery: 4 * time.Second, ackWait: 2 * time.Second,
		minBackoff: time.Second, maxBackoff: time.Minute,
		queues: map[int64]*queue{}, turns: map[int64]context.CancelFunc{}, strangers: map[int64]bool{},
		carded: map[string]bool{}, seen: map[int64]bool{},
		journal: journal{dir: opts.QueueDir}, done: make(chan struct{}),
	}
	for _, id := range opts.AllowedUsers {
		b.allowed[id] = true
	}
	return b, nil
}

// telegramAPI is the host of Telegram's own Bot API.
const telegramAPI = "api.telegram.org"

// checkWebhookURL refuses a webhook URL Telegram would refuse (setWebhook
// would then fail at every retry, and no update would ever arrive): it
// must be https, on a port Telegram posts to. A self-hosted Bot API server
// (api_base elsewhere) started with --local also posts to http and to any
// port: that is allowed, with a warning, since the updates and the secret
// token then cross the network in the clear.
func checkWebhookURL(raw, apiBase string, log *slog.Logger) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("telegram: telegram.webhook_url must be an https:// URL: the public address Telegram posts updates to")
	}
	if base, err := url.Parse(apiBase); err != nil || !strings.EqualFold(base.Hostname(), telegramAPI) {
		if u.Scheme == "http" {
			log.Warn("telegram: telegram.webhook_url is http://: only a self-hosted Bot API server started with --local posts to it, and the updates and the webhook's secret token cross the network unencrypted")
		}
		return nil
	}
	if u.Scheme != "https" {
		return errors.New("telegram: telegram.webhook_url is http://, and Telegram posts updates only to https: " +
			"put shelldon's webhook behind a TLS-terminating proxy and give its https:// URL, or remove webhook_url to use long polling")
	}
	switch u.Port() {
	case "", "443", "80", "88", "8443":
	default:
		return fmt.Errorf("telegram: telegram.webhook_url is on port %s, and Telegram posts updates only to ports 443, 80, 88 or 8443: "+
			"give the URL of one of those (a proxy in front of shelldon), or remove webhook_url to use long polling", u.Port())
	}
	return nil
}

func validToken(t string) bool {
	if len(t) < 8 || !strings.Contains(t, ":") {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validSecret(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Check asks the Bot API who the bot is (getMe), once, and returns its
// @username: the token works and the API is reachable.
func (b *Bot) Check(ctx context.Context) (string, error) {
	var me user
	if err := b.api.call(ctx, "getMe", struct{}{}, &me, 0); err != nil {
		return "", err
	}
	return "@" + me.Username, nil
}

// handle routes one update that was accepted (see accept). It never
// blocks on a turn: turns and presses run in their own goroutines.
func (b *Bot) handle(u update) {
	switch {
	case u.CallbackQuery != nil:
		b.onPress(u.UpdateID, u.CallbackQuery)
	case u.Message != nil:
		b.onMessage(u.UpdateID, u.Message)
	}
}

// duplicate reports an update id seen recently (a webhook retry).
func (b *Bot) duplicate(id int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[id] {
		return true
	}
	b.seen[id] = true
	b.seenOrder = append(b.seenOrder, id)
	if len(b.seenOrder) > maxSeen {
		delete(b.seen, b.seenOrder[0])
		b.seenOrder = b.seenOrder[1:]
	}
	return false
}

// forget takes an update id out of the recent ones: it was not accepted
// and comes again.
func (b *Bot) forget(id int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.seen, id)
}

// stranger logs a user who is not allowed, once per user id, without what
// they wrote.
func (b *Bot) stranger(u *user) {
	b.mu.Lock()
	logged := b.strangers[u.ID] || len(b.strangers) >= maxStrangers
	if !logged {
		b.strangers[u.ID] = true
	}
	b.mu.Unlock()
	if !logged {
		b.log.Warn("telegram: ignoring a user who is not in telegram.allowed_users", "user_id", u.ID, "username", u.Username)
	}
}

// spawn runs f in a goroutine that Run waits for, unless Run is ending.
func (b *Bot) spawn(f func(ctx context.Context)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spawnLocked(f)
}

func (b *Bot) spawnLocked(f func(ctx context.Context)) bool {
	if b.ctx == nil || b.stopping {
		return false
	}
	ctx := b.ctx
	b.wg.Go(func() {
		defer b.recover()
		f(ctx)
	})
	return true
}

// recover keeps a panic in one update's handling from taking the daemon down.
func (b *Bot) recover() {
	if r := recover(); r != nil {
		b.log.Error("telegram: panic while handling an update", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}

// enqueue queues a chat message behind the chat's earlier ones; each chat's
// messages run one at a time, in order, and chats run side by side. While
// the bot stops, nothing new starts: the message waits in the journal.
func (b *Bot) enqueue(w *work) {
	id := w.m.Chat.ID
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[id]
	if q == nil {
		q = &queue{}
		b.queues[id] = q
	}
	q.msgs = append(q.msgs, w)
	if !q.running && b.spawnLocked(func(ctx context.Context) { b.runQueue(ctx, id) }) {
		q.running = true
	}
}

// runQueue runs a chat's queue until it is empty or the bot stops.
func (b *Bot) runQueue(ctx context.Context, id int64) {
	for {
		b.mu.Lock()
		q := b.queues[id]
		if len(q.msgs) == 0 || b.stopping || ctx.Err() != nil {
			q.running = false
			if len(q.msgs) == 0 {
				delete(b.queues, id)
			}
			b.mu.Unlock()
			return
		}
		w := q.msgs[0]
		q.msgs = q.msgs[1:]
		b.mu.Unlock()
		func() {
			defer b.recover()
			b.work(ctx, w)
		}()
	}
}

// work does one queued message: its turn, marked started in the journal
// first and removed once the outcome is delivered. A turn the bot's
// stopping cut short stays marked started, and the next start takes it up
// again: the core runs a message's turn once per key, so one that had
// finished is delivered without running again, and one that was cut short
// runs again only if it had done nothing yet (see core.Core.SendOnce).
func (b *Bot) work(ctx context.Context, w *work) {
	if err := b.journal.start(w.id); err != nil {
		b.log.Error("telegram: the queue", "err", err)
	}
	if !b.turn(ctx, w) {
		return
	}
	if err := b.journal.done(w.id); err != nil {
		b.log.Error("telegram: the queue", "err", err)
	}
}

// messageKey names a chat message across restarts and redeliveries: the
// bot (its token's id), the update, and the message's id and date in its
// chat, so that neither another bot's updates nor Telegram's restarting
// of update ids after a quiet week can take it for another.
func (b *Bot) messageKey(w *work) string {
	bot, _, _ := strings.Cut(b.opts.Token, ":")
	return fmt.Sprintf("tg:%s:%d:%d:%d", bot, w.id, w.m.MessageID, w.m.Date)
}

// setTurn records the cancel of a chat's running turn; the returned func
// forgets it.
func (b *Bot) setTurn(id int64, cancel context.CancelFunc) func() {
	b.mu.Lock()
	b.turns[id] = cancel
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.turns, id)
		b.mu.Unlock()
		cancel()
	}
}

// cancelTurn cancels a chat's running turn and reports whether there was one.
func (b *Bot) cancelTurn(id int64) bool {
	b.mu.Lock()
	cancel, ok := b.turns[id]
	b.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

func chatName(id int64) string { return "tg:" + strconv.FormatInt(id, 10) }

// chatID is the Telegram chat of a chat name, ok false for another
// transport's chat.
func chatID(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "tg:")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// recoveredNote heads the reply of a turn recovery carried on.
const recoveredNote = "↻ A decision of yours was interrupted before its turn finished (shelldon or the command that carried it out stopped). shelldon took it over; the turn went on:"

// Deliver sends the outcome of a turn no message of this bot is waiting
// for (a decision recovery carried on after its decider stopped, see
// core.Core.OnRecovered) to its chat, with a note that says so, when the
// chat is a Telegram one; it reports whether it is. Before Run it waits
// for Run; a stopping bot drops it (the reply stays in the history).
func (b *Bot) Deliver(chat string, out core.Outcome) bool {
	id, ok := chatID(chat)
	if !ok {
		return false
	}
	if !b.unasked(func(ctx context.Context) {
		b.sendText(ctx, id, recoveredNote)
		b.deliver(ctx, id, out, nil)
	}) {
		b.log.Warn("telegram: stopping, so the reply of a recovered turn is not sent (it is in the chat's history)", "chat", chat, "turn", out.Turn)
	}
	return true
}
