// Box editor over an image: draw with the mouse, select, move, resize by handles, delete.
// The SVG's viewBox is the image's original size, so every coordinate here is in original
// pixels (what GAVEL files store) whatever the zoom. No HTML is ever built from strings.
"use strict";

(function () {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const HANDLES = ["nw", "n", "ne", "e", "se", "s", "sw", "w"];
  const MIN_SIZE = 2; // boxes smaller than this (original pixels) are treated as a click

  function clamp(value, low, high) {
    return Math.min(Math.max(value, low), high);
  }

  function rectFrom(a, b) {
    const x1 = Math.round(Math.min(a.x, b.x));
    const y1 = Math.round(Math.min(a.y, b.y));
    const x2 = Math.round(Math.max(a.x, b.x));
    const y2 = Math.round(Math.max(a.y, b.y));
    return { x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
  }

  class BoxEditor {
    constructor(svg, width, height, onChange) {
      this.svg = svg;
      this.width = width;
      this.height = height;
      this.onChange = onChange || function () {};
      this.boxes = [];
      this.selected = -1;
      this.drag = null;
      this.enabled = true;
      svg.setAttribute("viewBox", "0 0 " + width + " " + height);
      svg.addEventListener("pointerdown", (event) => this.down(event));
      svg.addEventListener("pointermove", (event) => this.move(event));
      svg.addEventListener("pointerup", (event) => this.up(event));
      svg.addEventListener("pointercancel", (event) => this.up(event));
      this.render();
    }

    setBoxes(boxes) {
      this.boxes = boxes.map((b) => ({ x: b[0], y: b[1], w: b[2], h: b[3] }));
      this.selected = -1;
      this.render();
    }

    values() {
      return this.boxes.map((b) => [b.x, b.y, b.w, b.h]);
    }

    point(event) {
      const matrix = this.svg.getScreenCTM().inverse();
      const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix);
      return { x: clamp(p.x, 0, this.width), y: clamp(p.y, 0, this.height) };
    }

    scale() {
      // original pixels per screen pixel, to keep handles and strokes a constant screen size
      const shown = this.svg.getBoundingClientRect().width;
      return shown > 0 ? this.width / shown : 1;
    }

    down(event) {
      if (event.button !== 0 || !this.enabled) return;
      event.preventDefault();
      const p = this.point(event);
      const handle = event.target.dataset ? event.target.dataset.handle : undefined;
      const index = event.target.dataset && event.target.dataset.index !== undefined
        ? Number(event.target.dataset.index) : -1;
      this.svg.setPointerCapture(event.pointerId);
      if (handle && this.selected >= 0) {
        this.drag = { mode: "resize", handle: handle, index: this.selected, start: p,
          orig: Object.assign({}, this.boxes[this.selected]) };
      } else if (index >= 0) {
        this.select(index);
        this.drag = { mode: "move", index: index, start: p, orig: Object.assign({}, this.boxes[index]) };
      } else {
        this.select(-1);
        this.drag = { mode: "draw", index: -1, start: p };
      }
    }

    move(event) {
      if (!this.drag) return;
      const p = this.point(event);
      const d = this.drag;
      if (d.mode === "draw") {
        const box = rectFrom(d.start, p);
        if (d.index < 0) {
          if (box.w < MIN_SIZE && box.h < MIN_SIZE) return;
          this.boxes.push(box);
          d.index = this.boxes.length - 1;
          this.selected = d.index;
        } else {
          this.boxes[d.index] = box;
        }
      } else if (d.mode === "move") {
        const o = d.orig;
        this.boxes[d.index] = {
          x: Math.round(clamp(o.x + p.x - d.start.x, 0, this.width - o.w)),
          y: Math.round(clamp(o.y + p.y - d.start.y, 0, this.height - o.h)),
          w: o.w, h: o.h,
        };
      } else {
        const o = d.orig;
        let x1 = o.x, y1 = o.y, x2 = o.x + o.w, y2 = o.y + o.h;
        if (d.handle.includes("w")) x1 = p.x;
        if (d.handle.includes("e")) x2 = p.x;
        if (d.handle.includes("n")) y1 = p.y;
        if (d.handle.includes("s")) y2 = p.y;
        this.boxes[d.index] = rectFrom({ x: x1, y: y1 }, { x: x2, y: y2 });
      }
      this.render();
    }

    up(event) {
      if (!this.drag) return;
      const d = this.drag;
      this.drag = null;
      if (this.svg.hasPointerCapture(event.pointerId)) this.svg.releasePointerCapture(event.pointerId);
      if (d.index >= 0) {
        const b = this.boxes[d.index];
        if (b.w < MIN_SIZE || b.h < MIN_SIZE) {
          this.boxes.splice(d.index, 1);
          this.selected = -1;
        }
      }
      this.render();
      if (d.index >= 0) this.onChange(d.mode);
    }

    select(index) {
      this.selected = index >= 0 && index < this.boxes.length ? index : -1;
      this.render();
    }

    cycle(step) {
      if (!this.boxes.length) return;
      const start = this.selected < 0 ? (step > 0 ? -1 : 0) : this.selected;
      this.select((start + step + this.boxes.length) % this.boxes.length);
    }

    remove(index) {
      if (index < 0 || index >= this.boxes.length) return;
      this.boxes.splice(index, 1);
      this.selected = -1;
      this.render();
      this.onChange("delete");
    }

    nudge(dx, dy) {
      const b = this.boxes[this.selected];
      if (!b) return;
      b.x = clamp(b.x + dx, 0, this.width - b.w);
      b.y = clamp(b.y + dy, 0, this.height - b.h);
      this.render();
      this.onChange("move");
    }

    element(name, attributes) {
      const node = document.createElementNS(SVG_NS, name);
      for (const key of Object.keys(attributes)) node.setAttribute(key, attributes[key]);
      return node;
    }

    render() {
      const svg = this.svg;
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      const s = this.scale();
      svg.appendChild(this.element("rect", {
        x: 0, y: 0, width: this.width, height: this.height, class: "backdrop",
      }));
      this.boxes.forEach((b, i) => {
        const rect = this.element("rect", {
          x: b.x, y: b.y, width: b.w, height: b.h, "stroke-width": 2 * s,
          class: i === this.selected ? "box selected" : "box",
        });
        rect.dataset.index = String(i);
        svg.appendChild(rect);
        const label = this.element("text", {
          x: b.x + 3 * s, y: b.y + 14 * s, "font-size": 13 * s, class: "box-label",
        });
        label.textContent = String(i + 1);
        svg.appendChild(label);
      });
      const b = this.boxes[this.selected];
      if (!b) return;
      const size = 9 * s;
      const spots = {
        nw: [b.x, b.y], n: [b.x + b.w / 2, b.y], ne: [b.x + b.w, b.y], e: [b.x + b.w, b.y + b.h / 2],
        se: [b.x + b.w, b.y + b.h], s: [b.x + b.w / 2, b.y + b.h], sw: [b.x, b.y + b.h], w: [b.x, b.y + b.h / 2],
      };
      for (const name of HANDLES) {
        const handle = this.element("rect", {
          x: spots[name][0] - size / 2, y: spots[name][1] - size / 2, width: size, height: size,
          "stroke-width": s, class: "handle handle-" + name,
        });
        handle.dataset.handle = name;
        svg.appendChild(handle);
      }
    }
  }

  window.BoxEditor = BoxEditor;
})();
