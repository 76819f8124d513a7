// Demo chat: POST /agent/stream with fetch(), read the SSE frames from the body stream, render them.
// Plain JS, no dependencies. Every piece of text is inserted with textContent (never as HTML).
(function () {
  "use strict";

  var SESSION_KEY = "trainer-demo-session";
  var log = document.getElementById("log");
  var form = document.getElementById("composer");
  var input = document.getElementById("message");
  var sendButton = document.getElementById("send");
  var tokenInput = document.getElementById("token");
  var modelSelect = document.getElementById("model");
  var sessionLabel = document.getElementById("session-label");

  var sessionId = sessionStorage.getItem(SESSION_KEY) || null;
  var busy = false;
  var statusLines = {}; // tool name -> the status line of its running call
  // Previews of the call the model is writing (docs/contracts.md §7.5): they are drafts until the call's
  // tool_result (a message) or the delivering message_notify_user (a workout) replaces them, and go with the turn.
  var previewBubbles = []; // {tool, callId, box, bubble} of messages still being written, oldest first
  var drafts = []; // {callId, card, exercises: {index: exercise}} of workouts still being written
  var settled = {}; // call ids whose final frames have been shown: a late preview of them is ignored

  // ---- small DOM helpers -------------------------------------------------------------------------

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function append(node) {
    var welcome = log.querySelector(".welcome");
    if (welcome) welcome.remove();
    log.appendChild(node);
    scrollToEnd();
    return node;
  }

  // The page's end, not the new node's: a node is often filled after it is appended (a question's options),
  // and its own bottom edge would sit under the sticky composer. At the very end the composer follows the log.
  function scrollToEnd() {
    window.scrollTo(0, document.documentElement.scrollHeight);
  }

  function line(kind, text) {
    return append(el("div", "line " + kind, text));
  }

  // Light markdown: paragraphs, "- " bullet lists and **bold**, built as DOM nodes.
  function richText(container, text) {
    var list = null;
    String(text || "").split(/\n/).forEach(function (raw) {
      var bullet = /^\s*[-*•]\s+(.*)$/.exec(raw);
      if (bullet) {
        if (!list) list = container.appendChild(el("ul"));
        inline(list.appendChild(el("li")), bullet[1]);
        return;
      }
      list = null;
      if (raw.trim()) inline(container.appendChild(el("p")), raw);
    });
    return container;
  }

  function inline(parent, text) {
    String(text).split(/(\*\*[^*]+\*\*)/).forEach(function (part) {
      if (/^\*\*[^*]+\*\*$/.test(part)) parent.appendChild(el("strong", null, part.slice(2, -2)));
      else if (part) parent.appendChild(document.createTextNode(part));
    });
  }

  function setSession(id) {
    sessionId = id || null;
    if (sessionId) sessionStorage.setItem(SESSION_KEY, sessionId);
    else sessionStorage.removeItem(SESSION_KEY);
    // Without a session there is nothing to label: the "New session" button says the rest.
    sessionLabel.textContent = sessionId ? "Session " + sessionId.slice(0, 8) : "";
    sessionLabel.title = sessionId || "";
    sessionLabel.hidden = !sessionId;
  }

  function setBusy(value) {
    busy = value;
    sendButton.disabled = value;
    document.querySelectorAll(".question:not(.answered) .option, .suggestion").forEach(function (b) {
      b.disabled = value;
    });
  }

  // ---- workout cards -----------------------------------------------------------------------------

  // How an exercise reads: the rule of datasources_app.formatters (exercise_prescription, exercise_rest and
  // exercise_card_text, docs/architecture.md "One rendering"), mirrored step for step;
  // tests/trainer_agent/streaming/test_demo_card_prescriptions.py runs both on the same exercises.

  // At most one decimal, no trailing ".0" (formatters.number).
  function num(value) {
    var rounded = Math.round(Number(value) * 10) / 10;
    return String(rounded);
  }

  // "20" when every value is the same, else "20/20/22.5" (formatters._same_or_slashes).
  function sameOrSlashes(values) {
    return values.every(function (v) { return v === values[0]; }) ? values[0] : values.join("/");
  }

  // "3×8", "3×8/8/6", "3×45s"; "3 sets" without reps (formatters.sets_reps).
  function setsReps(sets, values, suffix) {
    var shown = (values || []).filter(function (v) { return v !== null && v !== undefined; }).map(num);
    var count = sets || shown.length;
    if (!shown.length) return count ? count + " sets" : "";
    return count + "×" + sameOrSlashes(shown) + (suffix || "");
  }

  // How many dumbbells/kettlebells load_each is for (StoredExercise.load_implements): 2 is a pair.
  function implementsOf(ex) {
    if (ex.implements === 1 || ex.implements === 2) return ex.implements;
    return ex.load_per_hand === true ? 2 : 1;  // a workout stored before `implements`
  }

  // " @ 20kg", " @ 20/20/22.5kg", " @ 20kg each hand" for a pair; "" when unloaded (formatters.loads).
  function loadText(ex) {
    var shown = (ex.load_each || []).filter(function (v) { return v; }).map(num);
    if (!shown.length) return "";
    var unit = ex.load_unit === "lb" ? "lb" : "kg";
    return " @ " + sameOrSlashes(shown) + unit + (implementsOf(ex) === 2 ? " each hand" : "");
  }

  // A circuit/superset/giant-set member is done once per round of its group (the group header says how many).
  function oncePerRound(ex) {
    return !!(ex.group && ["circuit", "superset", "giant_set"].indexOf(ex.group.type) >= 0);
  }

  // "3×10 @ 20kg each hand", "3×45s", "30min 5km @ 5:30/km", "8×20s/10s", a circuit's "40s work, 20s rest"
  // (formatters.exercise_prescription).
  function exercisePrescription(ex) {
    var type = ex.exercise_type || "reps";
    var once = oncePerRound(ex);
    var text;
    if (type === "hold") text = setsReps(ex.sets, ex.hold_sec, "s");
    else if (type === "duration") {
      var parts = [];
      if (ex.duration_min) parts.push(num(ex.duration_min) + "min");
      if (ex.distance) parts.push(num(ex.distance) + (ex.distance_unit === "mi" ? "mi" : "km"));
      text = parts.join(" ");
      if (ex.target_pace) text = (text + " @ " + ex.target_pace).trim();
    } else if (type === "intervals") {
      if (!ex.rounds) text = "";
      else {
        var work = ex.work_sec ? ex.work_sec + "s" : "?";
        var rest = once ? null : ex.rest_sec;
        text = ex.rounds + "×" + work + (rest !== null && rest !== undefined ? "/" + rest + "s" : "");
      }
    } else text = setsReps(ex.sets, ex.reps) + loadText(ex);
    var single = type === "reps" || type === "hold" ? ex.sets === 1 : ex.rounds === 1;
    if (once && single && text.indexOf("1×") === 0) text = text.slice(2);
    if (once && type === "intervals" && text && ex.rest_sec) text += " work, " + ex.rest_sec + "s rest";
    return text;
  }

  // "90s" after each set of a reps or hold exercise, not for a round member (formatters.exercise_rest).
  function exerciseRest(ex) {
    if (ex.rest_sec === null || ex.rest_sec === undefined || oncePerRound(ex)) return "";
    return ex.exercise_type === "reps" || ex.exercise_type === "hold" ? ex.rest_sec + "s" : "";
  }

  // The card's line: "3×10 @ 20kg each hand · rest 90s", "3×10 · bodyweight · rest 60s", "3×15 · band"
  // (formatters.exercise_card_text).
  function prescription(ex) {
    var parts = [exercisePrescription(ex)];
    var loaded = (ex.load_each || []).some(function (v) { return v; });
    var band = (ex.equipment || []).some(function (slug) { return String(slug).indexOf("band") >= 0; });
    if ((ex.exercise_type || "reps") === "reps" && !loaded) parts.push(band ? "band" : "bodyweight");
    var rest = exerciseRest(ex);
    if (rest) parts.push("rest " + rest);
    return parts.filter(function (p) { return p; }).join(" · ");
  }

  function muscles(ex) {
    return (ex.muscles_utilized || [])
      .slice()
      .sort(function (a, b) { return (b.share || 0) - (a.share || 0); })
      .map(function (m) { return m.muscle + " " + Math.round((m.share || 0) * 100) + "%"; })
      .join(" · ");
  }

  function workoutCard(artifact) {
    var payload = artifact.payload || {};
    var card = buildCard(
      artifact.title || payload.title || "Your workout",
      (payload.exercises || []).slice().sort(function (a, b) { return (a.order || 0) - (b.order || 0); }),
      artifact.summary || payload.summary || {}
    );
    card.dataset.artifactId = artifact.artifact_id || "";
    return card;
  }

  // The card of a workout the model is still writing: the exercises finished so far (by their index in the
  // tool input), in the final card's layout, marked as a draft.
  function draftCard(draft) {
    var exercises = Object.keys(draft.exercises)
      .map(Number)
      .sort(function (a, b) { return a - b; })
      .map(function (index) {
        var ex = draft.exercises[index];
        return ex.order ? ex : Object.assign({}, ex, { order: index + 1 });
      });
    var card = buildCard("Your workout", exercises, {}, true);
    card.dataset.callId = draft.callId;
    return card;
  }

  function buildCard(titleText, exercises, summary, draft) {
    var card = el("section", "card workout-card" + (draft ? " draft" : ""));
    var head = card.appendChild(el("div", "card-head"));
    var title = head.appendChild(el("h3", null, titleText));
    if (draft) title.appendChild(el("span", "draft-tag", "Draft"));
    var meta = [];
    if (summary.estimated_duration_min) meta.push("~" + summary.estimated_duration_min + " min");
    var count = exercises.length + (exercises.length === 1 ? " exercise" : " exercises");
    meta.push(draft ? "writing… " + count + " so far" : count);
    head.appendChild(el("span", "card-meta", meta.join(" · ")));

    var tags = el("div", "card-tags");
    (summary.primary_goals || []).forEach(function (g) { tags.appendChild(el("span", "tag goal", g)); });
    (summary.muscles_targeted || []).slice(0, 6).forEach(function (m) { tags.appendChild(el("span", "tag", m)); });
    if (tags.childNodes.length) card.appendChild(tags);

    var list = card.appendChild(el("ol", "exercises"));
    exercises.forEach(function (ex, index) {
      var item = list.appendChild(el("li", "exercise"));
      item.appendChild(el("span", "ex-order", ex.order || index + 1));
      var title = item.appendChild(el("div", "ex-title"));
      title.appendChild(el("span", "ex-name", ex.exercise_name));
      title.appendChild(el("span", "badge " + (ex.exercise_type || ""), ex.exercise_type));
      if (ex.group && ex.group.type) {
        title.appendChild(el("span", "badge group", ex.group.name || ex.group.type.replace(/_/g, " ")));
        if (ex.group.rounds) {  // the group's first exercise: how many times the whole group is done
          var head = [ex.group.rounds + (ex.group.rounds === 1 ? " round" : " rounds")];
          if (ex.group.rest_between_rounds_sec) head.push("rest " + ex.group.rest_between_rounds_sec + " s between rounds");
          item.appendChild(el("div", "ex-group", head.join(" · ")));
        }
      }
      item.appendChild(el("div", "ex-rx", prescription(ex)));
      var m = muscles(ex);
      if (m) item.appendChild(el("div", "ex-muscles", m));
      if (ex.notes) item.appendChild(el("div", "ex-notes", ex.notes));
    });
    return card;
  }

  // ---- previews (docs/contracts.md §7.5): drafts of what the model is writing ---------------------------

  // Whether the reader is at the end of the page (within a line): then growing text keeps it there.
  function atEnd() {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  }

  function messagePreview(data) {
    if (!data.call_id || settled[data.call_id]) return;
    var follow = atEnd();
    var preview = previewBubbles.find(function (p) { return p.callId === data.call_id; });
    if (!preview) {
      var bubble = el("div", "bubble coach streaming");
      var box = bubble;
      if (data.tool === "message_ask_user") {  // the question's box, so its options join it at the end
        box = el("div", "question");
        box.appendChild(bubble);
      }
      preview = { tool: data.tool, callId: data.call_id, box: append(box), bubble: bubble };
      previewBubbles.push(preview);
    }
    // The whole text so far, shown as the final bubble will show it; a "**" not yet closed waits for its end.
    var text = String(data.text || "");
    var parts = text.split("**");
    if (parts.length % 2 === 0) text = parts.slice(0, -1).join("**") + parts[parts.length - 1];
    preview.bubble.replaceChildren();
    richText(preview.bubble, text);
    if (follow) scrollToEnd();
  }

  function exercisePreview(data) {
    if (!data.call_id || settled[data.call_id] || !data.exercise || typeof data.index !== "number") return;
    var follow = atEnd();
    var draft = drafts.find(function (d) { return d.callId === data.call_id; });
    if (!draft) {
      draft = { callId: data.call_id, card: null, exercises: {} };
      drafts.push(draft);
    }
    draft.exercises[data.index] = data.exercise;
    var card = draftCard(draft);
    // Only the new exercise comes in with a short fade; the ones already shown stay still.
    var position = Object.keys(draft.exercises).map(Number).sort(function (a, b) { return a - b; }).indexOf(data.index);
    var row = card.querySelectorAll(".exercise")[position];
    if (row) row.classList.add("fresh");
    if (draft.card) draft.card.replaceWith(card);
    else append(card);
    draft.card = card;
    if (follow) scrollToEnd();
  }

  // The preview bubble of this tool's call, once its tool_result arrives (one call runs at a time: the oldest).
  function takePreviewBubble(tool) {
    var index = previewBubbles.findIndex(function (p) { return p.tool === tool; });
    if (index < 0) return null;
    var preview = previewBubbles.splice(index, 1)[0];
    settled[preview.callId] = true;
    return preview;
  }

  // The final card takes the place of the newest draft; older drafts (calls the model corrected) go.
  function placeWorkout(artifact) {
    var card = workoutCard(artifact);
    var newest = drafts.pop();
    if (newest && newest.card) newest.card.replaceWith(card);
    else append(card);
    if (newest) settled[newest.callId] = true;
    dropDrafts();
    return card;
  }

  function dropDrafts() {
    drafts.forEach(function (d) {
      settled[d.callId] = true;
      if (d.card) d.card.remove();
    });
    drafts = [];
  }

  // A turn's end: whatever is still a draft was never delivered.
  function dropPreviews() {
    previewBubbles.forEach(function (p) {
      settled[p.callId] = true;
      p.box.remove();
    });
    previewBubbles = [];
    dropDrafts();
  }

  // ---- frames (docs/contracts.md §7.2 (SSE frames)) --------------------------------------------------------------------

  function handleFrame(frame) {
    var type = frame.type;
    if (type === "knowledge") {
      line("knowledge", "Loaded: " + ((frame.data && (frame.data.displayName || frame.data.source)) || "data"));
    } else if (type === "status") {
      var data = frame.data || {};
      if (data.phase === "start") {
        statusLines[data.tool] = line("running", data.message);
      } else {
        var existing = statusLines[data.tool];
        // A failed call says "Adjusting...": the coach corrects it next; a turn that fails ends with `error`.
        var kind = data.phase === "error" ? "adjusting" : "done";
        if (existing) {
          existing.className = "line " + kind;
          existing.textContent = data.message;
          delete statusLines[data.tool];
        } else {
          line(kind, data.message);
        }
      }
    } else if (type === "message_preview") {
      messagePreview(frame.data || {});
    } else if (type === "exercise_preview") {
      exercisePreview(frame.data || {});
    } else if (type === "done") {
      dropPreviews();
      // Lines still running (the turn's own "Message received") end with the turn.
      Object.keys(statusLines).forEach(function (tool) {
        statusLines[tool].className = "line done";
        delete statusLines[tool];
      });
      setSession(frame.sessionId);
    } else if (type === "error") {
      dropPreviews();
      line("error", frame.message || "Something went wrong.");
    } else if (Object.prototype.hasOwnProperty.call(frame, "formatted")) {
      toolResult(frame);
    }
    // tool_start frames ({type: <tool>, data: {status: "running"}}) are shown by their status line.
  }

  function toolResult(frame) {
    var data = frame.data || {};
    var preview = frame.type === "message_notify_user" || frame.type === "message_ask_user"
      ? takePreviewBubble(frame.type) : null;
    // A failed call is the coach's to correct (its status line says "Adjusting..."); its error is for the admin.
    // What the model wrote for it was never delivered: its drafts go.
    if (frame.status === "failed") {
      if (preview) preview.box.remove();
      if (frame.type === "generate_workout") dropDrafts();
      return;
    }
    if (frame.type !== "message_notify_user" && frame.artifact && frame.artifact.payload) {
      // A tool made or changed the workout (generate_workout, draft_workout, a swap): its final cards show now,
      // in place of what was previewed; the coach's delivery a moment later puts itself in their place, and a
      // workout the turn never delivers goes at its end, as a draft does.
      var made = placeWorkout(frame.artifact);
      drafts.push({ callId: "result:" + (frame.artifact.artifact_id || ""), card: made, exercises: {} });
      return;
    }
    if (frame.type === "message_notify_user") {
      // The bubble the words were written in becomes the message (no second bubble).
      if (preview && !data.message) preview.box.remove();
      else if (preview) finishBubble(preview.bubble, data.message);
      else if (data.message) append(richText(el("div", "bubble coach"), data.message));
      if (frame.artifact && frame.artifact.payload) placeWorkout(frame.artifact);
    } else if (frame.type === "message_ask_user") {
      var box;
      if (preview) {
        box = preview.box;
        finishBubble(preview.bubble, data.question);
      } else {
        box = append(el("div", "question"));
        box.appendChild(richText(el("div", "bubble coach"), data.question));
      }
      var options = box.appendChild(el("div", "options"));
      (data.options || []).forEach(function (option) {
        var button = options.appendChild(el("button", "chip option", option));
        button.type = "button";
        button.disabled = busy; // enabled with the composer when the turn ends
        button.addEventListener("click", function () { answer(box, button, option); });
      });
      scrollToEnd();
    }
  }

  function finishBubble(bubble, text) {
    bubble.classList.remove("streaming");
    bubble.replaceChildren();
    richText(bubble, text);
  }

  // A chip answers the question as if its text had been typed and sent; the question is then closed.
  function answer(box, button, option) {
    if (busy) return;
    box.classList.add("answered");
    button.classList.add("chosen");
    box.querySelectorAll(".option").forEach(function (b) { b.disabled = true; });
    send(option);
  }

  // ---- SSE over fetch ----------------------------------------------------------------------------

  function parseEvent(block) {
    var data = [];
    block.split("\n").forEach(function (raw) {
      if (!raw || raw.charAt(0) === ":") return; // comment (": ping") or empty
      var colon = raw.indexOf(":");
      var field = colon < 0 ? raw : raw.slice(0, colon);
      var value = colon < 0 ? "" : raw.slice(colon + 1);
      if (value.charAt(0) === " ") value = value.slice(1);
      if (field === "data") data.push(value);
    });
    return data.length ? JSON.parse(data.join("\n")) : null;
  }

  async function streamTurn(body) {
    var response = await fetch("/agent/stream", {
      method: "POST",
      headers: {
        "Authorization": "Bearer " + tokenInput.value.trim(),
        "Content-Type": "application/json",
        "Accept": "text/event-stream"
      },
      body: JSON.stringify(body)
    });
    if (!response.ok) {
      var detail = response.statusText;
      try {
        var json = await response.json();
        detail = json.detail || json.error || detail;
      } catch (ignored) { /* not JSON */ }
      throw new Error(response.status + " · " + detail);
    }
    var header = response.headers.get("X-Session-Id");
    if (header) setSession(header);
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    var sawFrame = false;
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      var end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        var frame = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame) {
          if (!sawFrame) { sawFrame = true; clearThinking(); }
          handleFrame(frame);
        }
      }
    }
  }

  var thinking = null;
  function clearThinking() {
    if (thinking) { thinking.remove(); thinking = null; }
  }

  async function send(text) {
    text = String(text || "").trim();
    if (!text || busy) return;
    if (!tokenInput.value.trim()) {
      line("error", "Paste an access token under Connection first.");
      document.querySelector(".settings").open = true;
      return;
    }
    setBusy(true);
    append(el("div", "bubble user", text));
    thinking = line("thinking", "Thinking…");
    statusLines = {};
    previewBubbles = [];
    drafts = [];
    settled = {};
    var body = { message: text, model: modelSelect.value };
    if (sessionId) body.sessionId = sessionId;
    try {
      await streamTurn(body);
    } catch (error) {
      line("error", error.message || String(error));
    } finally {
      dropPreviews(); // a stream that ended without its terminal frame delivered none of them
      clearThinking();
      setBusy(false);
      input.focus({ preventScroll: true });
      scrollToEnd();
    }
  }

  // ---- wiring ------------------------------------------------------------------------------------

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = input.value;
    input.value = "";
    input.style.height = "";
    send(text);
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  input.addEventListener("input", function () {
    input.style.height = "";
    input.style.height = Math.min(input.scrollHeight, 160) + "px";
  });
  document.querySelectorAll(".suggestion").forEach(function (button) {
    button.addEventListener("click", function () { send(button.textContent); });
  });
  document.getElementById("new-session").addEventListener("click", function () {
    setSession(null);
    log.replaceChildren();
    line("done", "Started a new session.");
  });

  setSession(sessionId);
  input.focus();
})();
