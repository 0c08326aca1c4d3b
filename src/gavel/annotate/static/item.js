// The item page: verdict, category, explanation, boxes, zoom, keyboard shortcuts, saving.
// Text from the server is only ever set with textContent or form values, never as HTML.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("item-data").textContent);
  const tokenTag = document.querySelector('meta[name="csrf-token"]');
  const csrf = tokenTag ? tokenTag.content : "";
  const form = document.getElementById("annotation");
  const category = document.getElementById("category");
  const explanation = document.getElementById("explanation");
  const note = document.getElementById("note");
  const boxList = document.getElementById("box-list");
  const message = document.getElementById("message");
  const canvas = document.getElementById("canvas");
  const stage = document.getElementById("stage");
  const image = document.getElementById("image");
  const help = document.getElementById("help");
  let zoom = 1;
  let saving = false;

  const editor = new window.BoxEditor(document.getElementById("overlay"), data.width, data.height,
    function (what) {
      if (what === "draw" && verdict() !== "hallucinated") setVerdict("hallucinated");
      renderList();
    });

  function verdict() {
    const checked = form.querySelector('input[name="verdict"]:checked');
    return checked ? checked.value : "";
  }

  function setVerdict(value) {
    const input = form.querySelector('input[name="verdict"][value="' + value + '"]');
    if (input) input.checked = true;
    updateFields();
  }

  function updateFields() {
    const error = verdict() === "hallucinated";
    form.classList.toggle("no-error", !error);
    category.disabled = !error;
  }

  function renderList() {
    while (boxList.firstChild) boxList.removeChild(boxList.firstChild);
    editor.boxes.forEach(function (b, i) {
      const item = document.createElement("li");
      item.className = i === editor.selected ? "selected" : "";
      const text = document.createElement("span");
      text.textContent = b.x + ", " + b.y + ", " + b.w + ", " + b.h;
      text.className = "coords";
      text.addEventListener("click", function () { editor.select(i); renderList(); });
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "Delete";
      remove.className = "delete-box";
      remove.addEventListener("click", function () { editor.remove(i); });
      item.appendChild(text);
      item.appendChild(remove);
      boxList.appendChild(item);
    });
  }

  function collect() {
    const result = {
      verdict: verdict(),
      explanation: explanation.value.trim(),
      category: category.value || null,
      boxes: editor.values(),
      note: note ? note.value.trim() : "",
    };
    if (result.verdict !== "hallucinated") {
      result.category = null;
      result.boxes = [];
    }
    return result;
  }

  function problem(annotation) {
    if (!annotation.verdict) return "Say whether the sentence is correct.";
    if (annotation.verdict !== "hallucinated") return null;
    if (!annotation.category) return "Pick a category.";
    if (!annotation.explanation) return "Explain what is wrong and what the image shows.";
    if (!annotation.boxes.length) return "Draw at least one box around the error.";
    return null;
  }

  function show(text, kind) {
    message.textContent = text;
    message.className = kind || "";
  }

  function sameAsOriginal(annotation) {
    const original = data.annotation;
    if (!original) return false;
    return original.verdict === annotation.verdict &&
      (original.category || null) === annotation.category &&
      (original.explanation || "") === annotation.explanation &&
      JSON.stringify(original.boxes) === JSON.stringify(annotation.boxes);
  }

  async function submit(action) {
    if (saving) return;
    const annotation = collect();
    // Accept and pass keep the version on screen as it was (the server refuses one that
    // carries changes): after an edit, what the person wants kept is their edit, a correction.
    if ((action === "accept" || action === "pass") && data.annotation && !sameAsOriginal(annotation)) {
      action = "correct";
    }
    if (action === "annotate" || action === "correct") {
      const wrong = problem(annotation);
      if (wrong) { show(wrong, "error"); return; }
    }
    saving = true;
    show("Saving…");
    let response;
    try {
      response = await fetch("/api/items/" + data.id, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ action: action, base_version: data.base_version, annotation: annotation }),
      });
    } catch (error) {
      saving = false;
      show("The server could not be reached; nothing was saved. Try again.", "error");
      return;
    }
    let body = {};
    try { body = await response.json(); } catch (error) { body = {}; }
    if (response.ok) {
      show("Saved (version " + body.version + ").", "ok");
      window.location.assign("/next");
      return;
    }
    saving = false;
    show(body.error || ("Not saved (HTTP " + response.status + ")."), response.status === 409 ? "conflict" : "error");
  }

  function setZoom(value) {
    zoom = Math.min(Math.max(value, 0.05), 16);
    stage.style.width = Math.round(data.width * zoom) + "px";
    stage.style.height = Math.round(data.height * zoom) + "px";
    document.getElementById("zoom-level").textContent = Math.round(zoom * 100) + "%";
    editor.render();
  }

  function fit() {
    const room = canvas.clientWidth - 4;
    const tall = Math.max(window.innerHeight * 0.75, 200);
    setZoom(Math.min(room / data.width, tall / data.height));
  }

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && target.type !== "radio"));
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      const action = data.role === "annotator" ? "annotate"
        : (sameAsOriginal(collect()) ? (data.role === "reviewer" ? "accept" : "pass") : "correct");
      submit(action);
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    const step = event.shiftKey ? 10 : 1;
    const key = event.key;
    if (key === "c") setVerdict("correct");
    else if (key === "h") setVerdict("hallucinated");
    else if (key === "u") setVerdict("unusable");
    else if (/^[1-9]$/.test(key) && Number(key) <= data.categories.length) {
      setVerdict("hallucinated");
      category.value = data.categories[Number(key) - 1];
    } else if (key === "Delete" || key === "Backspace") editor.remove(editor.selected);
    else if (key === "Escape") { editor.select(-1); renderList(); }
    else if (key === "[") { editor.cycle(-1); renderList(); }
    else if (key === "]") { editor.cycle(1); renderList(); }
    else if (key === "ArrowLeft") editor.nudge(-step, 0);
    else if (key === "ArrowRight") editor.nudge(step, 0);
    else if (key === "ArrowUp") editor.nudge(0, -step);
    else if (key === "ArrowDown") editor.nudge(0, step);
    else if (key === "+" || key === "=") setZoom(zoom * 1.25);
    else if (key === "-") setZoom(zoom / 1.25);
    else if (key === "0") fit();
    else if (key === "a" && data.role !== "annotator") submit(data.role === "reviewer" ? "accept" : "pass");
    else if (key === "?") { if (help.open) help.close(); else help.showModal(); }
    else return;
    event.preventDefault();
  });

  canvas.addEventListener("wheel", function (event) {
    if (!event.ctrlKey) return;
    event.preventDefault();
    setZoom(event.deltaY < 0 ? zoom * 1.1 : zoom / 1.1);
  }, { passive: false });

  document.getElementById("zoom-in").addEventListener("click", function () { setZoom(zoom * 1.25); });
  document.getElementById("zoom-out").addEventListener("click", function () { setZoom(zoom / 1.25); });
  document.getElementById("zoom-fit").addEventListener("click", fit);
  form.querySelectorAll('input[name="verdict"]').forEach(function (input) {
    input.addEventListener("change", updateFields);
  });
  form.querySelectorAll("button[data-action]").forEach(function (button) {
    button.addEventListener("click", function () { submit(button.dataset.action); });
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); });

  if (data.annotation) {
    const a = data.annotation;
    setVerdict(a.verdict);
    category.value = a.category || "";
    explanation.value = a.explanation || "";
    editor.setBoxes(a.boxes || []);
  }
  updateFields();
  renderList();
  if (image.complete) fit(); else image.addEventListener("load", fit);
  fit();
  window.gavelEditor = editor; // for tests and the browser console
})();
