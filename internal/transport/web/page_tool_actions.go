package web

import (
	"errors"
	"net/http"

	"github.com/shelldon/shelldon/internal/core"
)

// The owner's commands on a self-coded tool, as forms on its page
// (/tools/{name}): quarantine, restore, rollback, remove; rollback and
// remove ask once more first. See page_tools.go.

// toolAction tells of an owner's command on a self-coded tool: the note
// a success shows, and whether it asks once more first; known is false
// for a command there is not.
func toolAction(action string) (note string, confirmed, known bool) {
	switch action {
	case "quarantine":
		return "quarantined", false, true
	case "restore":
		return "restored", false, true
	case "rollback":
		return "rolled-back", true, true
	case "remove":
		return "removed", true, true
	}
	return "", false, false
}

// postToolPageAction carries out an owner's command on a self-coded tool
// from its page's form.
func (s *Server) postToolPageAction(w http.ResponseWriter, r *http.Request) {
	name, action := r.PathValue("name"), r.PathValue("action")
	note, confirmed, known := toolAction(action)
	if !known || !validName(name) {
		d := pageData{CSRF: toolFormCSRF(r), Error: "There is no such tool or command."}
		s.showTool(w, http.StatusNotFound, d, toolPage{})
		return
	}
	if r.PostForm == nil { // the CSRF token came in the header
		r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
		_ = r.ParseForm()
	}
	if confirmed && r.PostForm.Get("confirm") != "yes" {
		http.Redirect(w, r, toolPath(name)+"?confirm="+action, http.StatusSeeOther)
		return
	}
	problem, status := "There are no self-coded tools.", http.StatusNotFound
	if s.tools != nil {
		_, err := s.tools.ToolAction(r.Context(), action, name, "web")
		switch {
		case err == nil:
			if action == "remove" {
				back(w, r, "/tools", note)
			} else {
				back(w, r, toolPath(name), note)
			}
			return
		case errors.Is(err, core.ErrNoSuchTool), errors.Is(err, core.ErrNoVersion):
		default:
			status = http.StatusConflict
		}
		problem = "Could not " + action + " " + name + ": " + err.Error()
	}
	data, _, _ := s.toolPage(r.Context(), name) // the zero toolPage when it cannot be read
	s.showTool(w, status, pageData{CSRF: toolFormCSRF(r), Error: problem}, data)
}

// toolFormCSRF is the CSRF token an action's request carried (checked by
// sessionOnly before the action ran), for the page it answers with.
func toolFormCSRF(r *http.Request) string {
	if v := r.Header.Get(csrfHeader); v != "" {
		return v
	}
	return r.PostForm.Get("csrf")
}

// toolCommands writes the owner's commands on a self-coded tool, and the
// question of the one to confirm, if any.
func toolCommands(p *page, csrf string, data toolPage) {
	if data.Confirm != "" {
		p.m(`<div class="card confirm" role="alert">
<p>`)
		label := "Roll back"
		if data.Confirm == "remove" {
			label = "Remove"
			p.m("Remove ").el("code", "", data.Name).m("? Its versions stay in the archive, but shelldon no longer has it.")
		} else {
			p.m("Roll ").el("code", "", data.Name).m(" back to its version before this one?")
		}
		p.m("</p>\n<div class=\"actions\">\n")
		p.button(data.Path+"/"+data.Confirm, csrf, label, "danger", "confirm", "yes").m("\n")
		p.link(data.Path, "Cancel").m("\n</div>\n</div>")
	}
	p.m("\n<div class=\"actions\">\n")
	state := data.Self.State
	if state == "live" {
		p.button(data.Path+"/quarantine", csrf, "Quarantine", "")
	}
	p.m("\n")
	if state == "quarantined" {
		p.button(data.Path+"/restore", csrf, "Restore", "")
	}
	p.m("\n")
	if state == "live" {
		p.m(`<form method="get" action="`).t(data.Path).m(`"><input type="hidden" name="confirm" value="rollback"><button type="submit">Roll back…</button></form>`)
	}
	p.m("\n").m(`<form method="get" action="`).t(data.Path).m(`"><input type="hidden" name="confirm" value="remove"><button type="submit" class="danger">Remove…</button></form>
</div>
`)
}
