package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/shelldon/shelldon/internal/core"
)

// The caps of the request bodies, checked against Content-Length before
// anything is read and while a body of unknown length streams in; no body
// is buffered whole before its JSON is decoded.
const (
	// maxChatBody fits a message of core.MaxInput bytes at its most
	// escaped (\u00XX for each byte) and a chat name.
	maxChatBody     = 8 * core.MaxInput
	maxSettingsBody = 64 << 10
	maxDecisionBody = 1 << 10
)

// decode reads r's body, at most limit bytes, as exactly one JSON value
// into v: unknown fields, a second value or anything but white space
// after it are refused with 400, a larger body with 413.
func decode(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send JSON (Content-Type: application/json)")
		return false
	}
	tooLarge := func() bool {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is over %d bytes, this endpoint's limit", limit))
		return false
	}
	if r.ContentLength > limit {
		return tooLarge()
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		// One value and nothing after it but white space.
		if _, terr := dec.Token(); terr != io.EOF {
			err = terr
			if err == nil {
				err = errors.New("the body holds more than one JSON value; send exactly one")
			}
		}
	}
	var big *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &big):
		return tooLarge()
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "bad_request", "the body is empty; send one JSON object")
	default:
		writeError(w, http.StatusBadRequest, "bad_request", "invalid JSON body: "+err.Error())
	}
	return false
}

// writeJSON writes v as the response, with WriteTimeout to do it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	armWrite(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
