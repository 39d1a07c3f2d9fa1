package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The Bot API's types, only the fields shelldon reads or sends.

type update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *message       `json:"message,omitempty"`
	CallbackQuery *callbackQuery `json:"callback_query,omitempty"`
}

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

type chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

type message struct {
	MessageID int64  `json:"message_id"`
	From      *user  `json:"from,omitempty"`
	Chat      chat   `json:"chat"`
	Date      int64  `json:"date"`
	Text      string `json:"text,omitempty"`
}

type callbackQuery struct {
	ID      string   `json:"id"`
	From    user     `json:"from"`
	Message *message `json:"message,omitempty"` // date 0: no longer accessible
	Data    string   `json:"data,omitempty"`
}

type button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

type keyboard struct {
	InlineKeyboard [][]button `json:"inline_keyboard"`
}

type linkPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

type sendMessageParams struct {
	ChatID      int64        `json:"chat_id"`
	Text        string       `json:"text"`
	ParseMode   string       `json:"parse_mode,omitempty"`
	ReplyMarkup *keyboard    `json:"reply_markup,omitempty"`
	LinkPreview *linkPreview `json:"link_preview_options,omitempty"`
}

type editMessageTextParams struct {
	ChatID      int64        `json:"chat_id"`
	MessageID   int64        `json:"message_id"`
	Text        string       `json:"text"`
	ParseMode   string       `json:"parse_mode,omitempty"`
	ReplyMarkup *keyboard    `json:"reply_markup,omitempty"` // nil removes the buttons
	LinkPreview *linkPreview `json:"link_preview_options,omitempty"`
}

type answerCallbackParams struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
}

type chatActionParams struct {
	ChatID int64  `json:"chat_id"`
	Action string `json:"action"`
}

type botCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

type setMyCommandsParams struct {
	Commands []botCommand `json:"commands"`
}

type getUpdatesParams struct {
	Offset         int64    `json:"offset,omitempty"`
	Timeout        int      `json:"timeout"`
	AllowedUpdates []string `json:"allowed_updates"`
}

type setWebhookParams struct {
	URL            string   `json:"url"`
	SecretToken    string   `json:"secret_token"`
	AllowedUpdates []string `json:"allowed_updates"`
}

type deleteWebhookParams struct {
	DropPendingUpdates bool `json:"drop_pending_updates"`
}

// allowedUpdates are the update kinds the bot asks for.
var allowedUpdates = []string{"message", "callback_query"}

// envelope is every Bot API response.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// apiError is a refusal from the Bot API.
type apiError struct {
	Method      string
	Code        int
	Description string
	RetryAfter  time.Duration // from a 429's parameters
}

func (e *apiError) Error() string {
	return fmt.Sprintf("telegram: %s: %d %s", e.Method, e.Code, e.Description)
}

// netError is a failed request, its message stripped of the bot token
// (net/http puts the whole URL, token included, into its errors).
type netError struct {
	method string
	msg    string
	err    error
}

func (e *netError) Error() string { return "telegram: " + e.method + ": " + e.msg }
func (e *netError) Unwrap() error { return e.err }

// transient reports an error worth retrying: the network, a 429 or a 5xx.
func transient(err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Code == http.StatusTooManyRequests || ae.Code >= 500
	}
	var ne *netError
	return errors.As(err, &ne) && !errors.Is(err, context.Canceled)
}

// fatal reports an error that retrying cannot fix: the token is wrong.
func fatal(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && (ae.Code == http.StatusUnauthorized || ae.Code == http.StatusNotFound)
}

func retryAfter(err error) time.Duration {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}

const (
	maxResponse    = 16 << 20
	callTimeout    = 30 * time.Second
	uploadTimeout  = 2 * time.Minute
	attempts       = 3
	maxRetryAfter  = time.Minute // a longer 429 wait is given up on, not slept through
	firstRetryWait = 500 * time.Millisecond
)

// client calls the Bot API at <base>/bot<token>/<method>. The token is
// kept out of every error it returns.
type client struct {
	prefix string // <base>/bot<token>/
	token  string
	hc     *http.Client
}

func newClient(base, token string, hc *http.Client) *client {
	return &client{prefix: strings.TrimRight(base, "/") + "/bot" + token + "/", token: token, hc: hc}
}

// redact removes the token from s.
func (c *client) redact(s string) string {
	if c.token == "" {
		return s
	}
	s = strings.ReplaceAll(s, c.token, "<token>")
	return strings.ReplaceAll(s, url.PathEscape(c.token), "<token>")
}

// call makes one JSON request; timeout bounds it (0: callTimeout).
func (c *client) call(ctx context.Context, method string, params, out any, timeout time.Duration) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram: %s: encode: %w", method, err)
	}
	return c.post(ctx, method, "application/json", body, out, timeout)
}

func (c *client) post(ctx context.Context, method, contentType string, body []byte, out any, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = callTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.prefix+method, bytes.NewReader(body))
	if err != nil {
		return &netError{method: method, msg: c.redact(err.Error())}
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the same error without the URL
		}
		return &netError{method: method, msg: c.redact(err.Error()), err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return &netError{method: method, msg: c.redact(err.Error()), err: err}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return &apiError{Method: method, Code: resp.StatusCode, Description: "not a Bot API response (" + resp.Status + ")"}
	}
	if !env.OK {
		e := &apiError{Method: method, Code: env.ErrorCode, Description: c.redact(env.Description)}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
			e.RetryAfter = time.Duration(env.Parameters.RetryAfter) * time.Second
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return fmt.Errorf("telegram: %s: decode result: %w", method, err)
		}
	}
	return nil
}

// do calls a method, retrying transient failures a few times and honouring
// a 429's retry_after.
func (c *client) do(ctx context.Context, method string, params, out any) error {
	return retry(ctx, func() error { return c.call(ctx, method, params, out, 0) })
}

// upload sends a file with multipart/form-data (sendDocument).
func (c *client) upload(ctx context.Context, method string, fields map[string]string, field, name string, content []byte, out any) error {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			return fmt.Errorf("telegram: %s: %w", method, err)
		}
	}
	fw, err := w.CreateFormFile(field, name)
	if err == nil {
		_, err = fw.Write(content)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return fmt.Errorf("telegram: %s: %w", method, err)
	}
	body := buf.Bytes()
	return retry(ctx, func() error { return c.post(ctx, method, w.FormDataContentType(), body, out, uploadTimeout) })
}

func retry(ctx context.Context, f func() error) error {
	wait := firstRetryWait
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || attempt >= attempts || !transient(err) || ctx.Err() != nil {
			return err
		}
		d := wait
		if ra := retryAfter(err); ra > 0 {
			if ra > maxRetryAfter {
				return err
			}
			d = ra
		}
		if !sleep(ctx, d) {
			return err
		}
		wait *= 2
	}
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
