// shelldon's chat page, streamed: the form posts to /chat/stream and the
// turn's events (Server-Sent Events) show as they come; at the end the
// page reloads and shows the conversation as the daemon keeps it. Every
// text from the model goes in with textContent, never as markup. Without
// this script the form posts to /chat and the page comes back whole.
"use strict";
(function () {
  const form = document.getElementById("say");
  const box = document.getElementById("text");
  const progress = document.getElementById("progress");
  const conversation = document.getElementById("conversation");
  if (!form || !window.fetch || !window.TextDecoder) return;

  function bubble(cls, who) {
    const div = document.createElement("div");
    div.className = "msg " + cls;
    const p = document.createElement("p");
    p.className = "who";
    p.textContent = who;
    const pre = document.createElement("pre");
    pre.className = "text";
    div.append(p, pre);
    conversation.append(div);
    return pre;
  }

  form.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });

  form.addEventListener("submit", async function (e) {
    e.preventDefault();
    const text = box.value;
    if (!text.trim()) return;
    const csrf = form.elements.csrf.value;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    bubble("you", "You").textContent = text;
    const reply = bubble("bot", "shelldon");
    progress.textContent = "Thinking…";
    box.value = "";
    try {
      const resp = await fetch("/chat/stream", {
        method: "POST",
        headers: { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ text: text, csrf: csrf }),
        credentials: "same-origin",
      });
      if (!resp.ok || !resp.body) {
        progress.textContent = "The message was not sent (" + resp.status + ").";
        button.disabled = false;
        return;
      }
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = "message", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          let v;
          try { v = JSON.parse(data); } catch (_) { continue; }
          if (event === "text") reply.textContent += v;
          else if (event === "tool") progress.textContent = (v.phase === "start" ? "Running " : "Finished ") + v.tool + "…";
          else if (event === "error") progress.textContent = v.message;
          else if (event === "done") { progress.textContent = ""; window.location.reload(); return; }
        }
      }
      window.location.reload();
    } catch (err) {
      progress.textContent = "The connection broke; the page will show what was kept.";
      window.location.reload();
    }
  });
})();
