"""Sampling frames from long videos: gavel's sampler against the two obvious loops, then a whole
``gavel generate --benchmark videohallucer`` run on such videos.

    python bench/frames.py [--seconds 180] [--counts 8 32] [--videos 50] [--only sampler|generate]

The bench makes a 1920x1080 H.264 clip (30 fps, x264's default keyframe interval and B-frames)
once and keeps it in the temporary folder. Part one samples 8 and 32 frames from it three
ways, each in its own process so that peak memory (the resident set, native buffers included)
is that approach's alone:

- gavel: ``gavel.media.frames.sample_frames``;
- decode-all: decode every frame in order, converting only the kept ones to RGB;
- seek loop: for each kept frame, seek to its time and decode until reaching it, trusting the
  container's frame count and rate (what one writes by hand).

Gavel's former sampler (keep every frame as RGB, then pick) is not run on the long clip: its
memory is printed from the frame count, as it would not fit. Every approach's frames are hashed,
so the table also says whether they agree pixel for pixel.

Part two writes a VideoHallucer folder of ``--videos`` pairs, each pair's two questions on one
video (hard links to the clip: separate files to gavel, one copy on disk), and runs
``gavel generate`` against the loopback OpenAI server with no latency: questions per second,
and the CPU the gavel process used (its user + system time over its wall time, in cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

WIDTH, HEIGHT, RATE = 1920, 1080, 30
APPROACHES = ("baseline", "gavel", "decode-all", "seek-loop")


# --- the clip -------------------------------------------------------------------------------


def make_clip(seconds: int) -> Path:
    """The cached clip (made once: about a minute of CPU per minute of video at 1080p)."""
    folder = Path(tempfile.gettempdir()) / "gavel-bench-frames"
    folder.mkdir(exist_ok=True)
    path = folder / f"clip-{seconds}s-{WIDTH}x{HEIGHT}.mp4"
    if path.exists():
        return path
    import av
    import numpy as np

    print(f"making {path} ({seconds} s, {WIDTH}x{HEIGHT}, {RATE} fps H.264) ...", flush=True)
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    # A smooth texture sliding over a gradient: motion the encoder predicts, B-frames included.
    coarse = rng.integers(0, 96, size=(HEIGHT // 8, WIDTH // 8), dtype=np.uint8)
    texture = np.kron(coarse, np.ones((8, 8), dtype=np.uint8))
    gradient = (np.arange(WIDTH, dtype=np.uint16)[None, :] * 160 // WIDTH).astype(np.uint8)
    luma = (texture // 2 + gradient + 16).astype(np.uint8)
    chroma = np.full((HEIGHT // 2, WIDTH), 128, dtype=np.uint8)
    partial = path.with_suffix(".partial.mp4")
    with av.open(str(partial), "w") as out:
        stream = out.add_stream("libx264", rate=RATE, options={"preset": "superfast"})
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        for i in range(seconds * RATE):
            planes = np.concatenate([np.roll(luma, (i * 2, i * 5), axis=(0, 1)), chroma])
            box = 200 + (i * 7) % (WIDTH - 400)
            planes[400:600, box : box + 200] = 235  # a bright box crossing the picture
            frame = av.VideoFrame.from_ndarray(planes, format="yuv420p")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    partial.rename(path)
    print(f"  made in {time.perf_counter() - started:.0f} s, {path.stat().st_size / 1e6:.0f} MB")
    return path


# --- part one: the sampler, each approach in its own process ----------------------------------


def child(approach: str, clip: Path, count: int) -> None:
    """Run one approach and print its time and the hash of its frames (in a subprocess)."""
    import av  # noqa: F401  (imported by every approach, so the baseline counts it too)
    import numpy as np

    from gavel.media.frames import FrameSampling, choose_indices, sample_frames

    sampling = FrameSampling(count=count)
    started, cpu = time.perf_counter(), cpu_seconds()
    if approach == "baseline":
        images: list[np.ndarray] = []
    elif approach == "gavel":
        images = list(sample_frames(clip, sampling).images)
    elif approach == "decode-all":
        images = decode_all(clip, sampling, choose_indices)
    elif approach == "seek-loop":
        images = seek_loop(clip, sampling, choose_indices)
    else:
        raise SystemExit(f"unknown approach {approach}")
    elapsed, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    digest = hashlib.sha256()
    for image in images:
        digest.update(np.ascontiguousarray(image).tobytes())
    print(json.dumps({"seconds": elapsed, "cpu": cpu, "frames": len(images),
                      "sha256": digest.hexdigest(), "peak_mb": peak_mb()}))  # fmt: skip


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_mb(pid: int | str = "self") -> float:
    """A process's peak resident set (VmHWM: reset by exec, unlike a child's ru_maxrss, which
    starts from the forking parent's size)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:  # the process has just exited
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def decode_all(clip: Path, sampling, choose_indices) -> list:
    import av

    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        keep = set(choose_indices(stream.frames, float(stream.average_rate), sampling))
        return [
            frame.to_ndarray(format="rgb24")
            for i, frame in enumerate(container.decode(stream))
            if i in keep
        ]


def seek_loop(clip: Path, sampling, choose_indices) -> list:
    import av

    images = []
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        rate, base = float(stream.average_rate), stream.time_base
        start = stream.start_time or 0
        for index in choose_indices(stream.frames, rate, sampling):
            target = start + round(index / rate / base)
            container.seek(target, stream=stream, backward=True)
            for frame in container.decode(stream):
                if frame.pts is not None and frame.pts >= target:
                    images.append(frame.to_ndarray(format="rgb24"))
                    break
    return images


def measure(approach: str, clip: Path, count: int) -> dict:
    """Wall and CPU time of the work, and the process's peak resident set size (MB)."""
    command = [sys.executable, __file__, "--child", approach, "--clip", str(clip),
               "--count", str(count)]  # fmt: skip
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def sampler_part(clip: Path, counts: list[int]) -> None:
    import av

    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        total, width, height = stream.frames, stream.width, stream.height
    print(f"\nclip: {clip.name}, {total} frames, {clip.stat().st_size / 1e6:.0f} MB; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (a loaded machine "
          "stretches wall times; CPU times are steadier)")  # fmt: skip
    everything_gb = total * width * height * 3 / 1e9
    print(f"gavel's former sampler (every frame kept as RGB) would hold {everything_gb:.1f} GB "
          "of pixels: not run")  # fmt: skip
    for count in counts:
        results = {approach: measure(approach, clip, count) for approach in APPROACHES}
        base = results.pop("baseline")
        print(f"\n{count} frames  (baseline process: imports, no decoding: "
              f"{base['peak_mb']:.0f} MB peak)")  # fmt: skip
        print(f"  {'approach':<11} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'above base':>10}"
              "  same pixels as gavel")  # fmt: skip
        reference = results["gavel"]["sha256"]
        for approach, result in results.items():
            same = "yes" if result["sha256"] == reference else "NO"
            print(f"  {approach:<11} {result['seconds']:>7.2f} {result['cpu']:>7.2f} "
                  f"{result['peak_mb']:>8.0f} {result['peak_mb'] - base['peak_mb']:>10.0f}  "
                  f"{same}")  # fmt: skip
        gavel = results["gavel"]
        for other in ("seek-loop", "decode-all"):
            them = results[other]
            print(f"  gavel / {other}: wall {gavel['seconds'] / them['seconds']:.2f}x, "
                  f"CPU {gavel['cpu'] / them['cpu']:.2f}x, "
                  f"peak {gavel['peak_mb'] / them['peak_mb']:.2f}x")  # fmt: skip
        print(f"  goals: time within 1.5x of the seek loop; peak {gavel['peak_mb']:.0f} MB < 300")


# --- part two: gavel generate on many such videos ---------------------------------------------


def write_videohallucer(root: Path, clip: Path, videos: int) -> None:
    """``videos`` pairs in the official layout, both questions of a pair on one video."""
    category = root / "object_relation"
    (category / "videos").mkdir(parents=True)
    pairs = []
    for i in range(videos):
        name = f"clip{i:03d}.mp4"
        try:
            os.link(clip, category / "videos" / name)
        except OSError:  # another filesystem: a copy
            (category / "videos" / name).write_bytes(clip.read_bytes())
        pairs.append({
            "basic": {"video": name, "question": "Is there a box in the video?", "answer": "yes"},
            "hallucination": {"video": name, "question": "Is there a dog in the video?",
                              "answer": "no"},
            "type": "subject",
        })  # fmt: skip
    (category / "object_relation.json").write_text(json.dumps(pairs))


def cores_to_be_had(seconds: float = 3.0) -> float:
    """How many cores two busy threads get on this machine now (hashing releases the lock):
    the ceiling for "cores busy" on a shared machine."""
    import hashlib
    import threading

    data = bytes(2**20)
    stop = time.perf_counter() + seconds

    def burn() -> None:
        while time.perf_counter() < stop:
            hashlib.sha256(data).digest()

    started, cpu = time.perf_counter(), cpu_seconds()
    threads = [threading.Thread(target=burn) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (cpu_seconds() - cpu) / (time.perf_counter() - started)


def generate_part(clip: Path, videos: int, frames: int, concurrency: int) -> None:
    from loopback import loopback_server

    ceiling = cores_to_be_had()

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "vh"
        write_videohallucer(root, clip, videos)
        with loopback_server(0.0, reply="no") as url:
            command = [sys.executable, "-m", "gavel", "generate", "--benchmark", "videohallucer",
                       "--data", str(root), "--model", "openai:bench", "--base-url", url,
                       "--out", str(Path(folder) / "pred.jsonl"), "--no-cache", "--no-progress",
                       "--concurrency", str(concurrency), "--frames", str(frames)]  # fmt: skip
            log = Path(folder) / "stderr.txt"
            with log.open("w") as stderr:
                started = time.perf_counter()
                process = subprocess.Popen(command, stderr=stderr)
                peak = 0.0
                while True:  # its peak memory read while it runs (gone once it has exited)
                    pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                    if pid:
                        break
                    peak = max(peak, peak_mb(process.pid))
                    time.sleep(0.1)
                wall = time.perf_counter() - started
        if status != 0:
            raise SystemExit(f"gavel generate failed:\n{log.read_text()}")
        answered = sum(1 for _ in (Path(folder) / "pred.jsonl").open())
    cpu = usage.ru_utime + usage.ru_stime
    busy = cpu / wall
    print(f"\ngavel generate --benchmark videohallucer, {videos} videos ({2 * videos} questions), "
          f"--frames {frames}, --concurrency {concurrency}, loopback server, 0 latency")  # fmt: skip
    print(f"  {answered} answers in {wall:.1f} s: {answered / wall:.2f} questions/s, "
          f"{wall / videos:.2f} s per video")  # fmt: skip
    print(f"  CPU of the gavel process: {cpu:.1f} s, {busy:.2f} of {os.cpu_count()} cores busy "
          f"(goal >= 1.6 of 2); peak {peak:.0f} MB")  # fmt: skip
    print(f"  for scale: two threads hashing got {ceiling:.2f} cores just before (load average "
          f"{os.getloadavg()[0]:.1f} after); gavel / that: {busy / ceiling:.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=180, help="clip length [180]")
    parser.add_argument("--counts", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--videos", type=int, default=50, help="videos in the generate run [50]")
    parser.add_argument("--frames", type=int, default=8, help="frames per video there [8]")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--only", choices=["sampler", "generate"], default=None)
    parser.add_argument("--child", choices=APPROACHES, help=argparse.SUPPRESS)
    parser.add_argument("--clip", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.clip, args.count)
        return
    clip = make_clip(args.seconds)
    if args.only != "generate":
        sampler_part(clip, args.counts)
    if args.only != "sampler":
        generate_part(clip, args.videos, args.frames, args.concurrency)


if __name__ == "__main__":
    main()
