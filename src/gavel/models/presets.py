"""Presets for model families: the box convention their answers use and how to prompt them.

A preset only declares; it never inspects answers. The convention is what the family is known to
emit when asked for boxes (docs/data-format.md lists the conversions and, for each family, where
its rule comes from); the GAVEL prompt asks for boxes in exactly that convention, so the
declaration and the request agree. DetailVerifyBench and VideoHallucer use their official
prompts for every family.

A model fine-tuned to another family's box tokens is named ``BASE+TARGET``: the base family's
image handling and prompt, the target's convention. Every preset whose family answers in pixels
(``pixel``, ``resized-pixel``) has one for each of :data:`FINE_TUNE_TARGETS` (``gpt+paligemma``:
a GPT-4o fine-tuned to PaliGemma's ``<locNNNN>`` detection format).
"""

from __future__ import annotations

from dataclasses import dataclass

from gavel.errors import ConfigError
from gavel.media.sampling import FrameSampling


@dataclass(frozen=True)
class Preset:
    name: str
    box_format: str
    #: Longest image side sent to the model (None: send as is).
    max_image_side: int | None
    #: The GAVEL prompt template shipped with gavel.
    gavel_prompt: str
    notes: str
    #: How a video's frames are chosen for this family (None: gavel's default, 8 uniform).
    frames: FrameSampling | None = None
    #: Where the family's box rule comes from (its model card, or the family's own parser).
    source: str = ""
    #: One reply in the family's own form (``gavel list presets`` shows the boxes it reads).
    example: str = ""
    #: For ``BASE+TARGET`` presets: the base family's preset.
    base: str | None = None


_PRESETS: dict[str, Preset] = {}


def _register(preset: Preset) -> None:
    _PRESETS[preset.name] = preset


def get_preset(name: str) -> Preset:
    try:
        return _PRESETS[name]
    except KeyError:
        raise ConfigError(
            f"unknown preset {name!r}; choose one of: {', '.join(_PRESETS)}"
        ) from None


def preset_names() -> list[str]:
    return list(_PRESETS)


_register(Preset(
    "qwen2.5-vl", "resized-pixel", None, "gavel_v1",
    "absolute pixels of the processor's resized input (smart_resize, factor 28)",
    source="QwenLM/Qwen2.5-VL cookbooks (ocr.ipynb, document_parsing.ipynb); the processor's "
    "smart_resize",
    example='{"bbox_2d": [125, 169, 754, 208], "text_content": "UNIHAKKA"}',
))  # fmt: skip
_register(Preset(
    "qwen3-vl", "rel1000", None, "gavel_v1", "coordinates relative to 0-1000",
    source="QwenLM/Qwen3-VL cookbooks (omni_recognition.ipynb): bbox_2d in 0-1000",
    example='{"bbox_2d": [0, 614, 224, 825], "name_en": "Rice"}',
))  # fmt: skip
_register(Preset(
    "internvl3.5", "rel1000", None, "gavel_v1", "coordinates relative to 0-1000",
    source="InternVL documentation: <ref>…</ref><box>[[x1, y1, x2, y2]]</box> in 0-1000",
    example="<ref>the white cat</ref><box>[[200, 350, 600, 550]]</box>",
))  # fmt: skip
_register(Preset(
    "internvl2", "rel1000", None, "gavel_v1",
    "InternVL2: <ref>phrase</ref><box>[[x1, y1, x2, y2]]</box> in 0-1000; asked loosely, "
    "labelled numbers in prose ((x1, y1) = (0, 800) and (x2, y2) = (300, 1000))",
    source="OpenGVLab InternVL2 model card (grounding, coordinates normalized to 0-1000)",
    example="(x1, y1) = (0, 800) and (x2, y2) = (300, 1000)",
))  # fmt: skip
_register(Preset(
    "internvl2.5", "rel1000", None, "gavel_v1",
    "InternVL2.5: as InternVL2, <box>[[x1, y1, x2, y2]]</box> in 0-1000; asked loosely it "
    "labels the numbers ((x1: 200, y1: 350, x2: 600, y2: 550))",
    source="OpenGVLab InternVL2.5 model card (grounding, coordinates normalized to 0-1000)",
    example="The cat is within (x1: 200, y1: 350, x2: 600, y2: 550).",
))  # fmt: skip
_register(Preset(
    "gpt", "pixel", 1024, "gavel_v1",
    "pixels of the image as sent; images are downscaled to a 1024 px long side",
    source="OpenAI vision guide (images resized); gavel asks for pixels of the image as sent",
    example='{"boxes": [[10, 20, 110, 220]]}',
))  # fmt: skip
_register(Preset(
    "gemini", "yx1000", None, "gavel_v1",
    "box_2d as [ymin, xmin, ymax, xmax] in 0-1000; videos as one frame per second (the rate "
    "Gemini samples video files at), at most 32",
    FrameSampling(mode="fps", fps=1.0, max_frames=32),
    source="google-gemini/cookbook Spatial_understanding.ipynb; supervision's "
    "from_google_gemini_2_5",
    example='{"box_2d": [393, 67, 574, 206], "label": "red sprinkle topping"}',
))  # fmt: skip
_register(Preset(
    "florence-2", "loc1000", None, "gavel_v1",
    "<loc_N> tokens in 1000 bins; Florence-2 grounds phrases but rarely states a verdict",
    source="Florence-2's processor (post_process_generation: 1000 bins, bin centres)",
    example="car<loc_53><loc_333><loc_933><loc_774>",
))  # fmt: skip
_register(Preset(
    "generic", "pixel", None, "gavel_v1", "pixels of the image as sent",
    source="gavel's prompt: [x1, y1, x2, y2] in pixels of the image as sent",
    example="[[120, 80, 430, 560]]",
))  # fmt: skip
_register(Preset(
    "gavel-sft", "coord-tokens", None, "gavel_v1",
    "a model trained with `gavel train sft`: <p-512>..<p512> coordinate tokens, asked with "
    "the prompt it was trained on",
    source="the paper's appendix A.2 (q(v, S)); gavel.train.coords",
    example="<p-200><p-100><p300><p400>",
))  # fmt: skip
_register(Preset(
    "qwen-vl", "qwen-vl", None, "gavel_v1",
    "Qwen-VL (v1): <ref>phrase</ref><box>(x1,y1),(x2,y2)</box>, corner pairs in 0-1000; "
    "several <box> may follow one <ref>",
    source="QwenLM/Qwen-VL TUTORIAL.md",
    example="<ref> Two apples</ref><box>(302,257),(582,671)</box><box>(603,252),(878,642)</box>",
))  # fmt: skip
_register(Preset(
    "qwen2-vl", "rel1000", None, "gavel_v1",
    "Qwen2-VL: <|object_ref_start|>phrase<|object_ref_end|><|box_start|>(x1,y1),(x2,y2)"
    "<|box_end|>, corner pairs in 0-1000",
    source="QwenLM/Qwen2-VL README (grounding: coordinates normalized to [0, 1000))",
    example="<|object_ref_start|>the dog<|object_ref_end|><|box_start|>(531,516),(581,596)"
    "<|box_end|>",
))  # fmt: skip
_register(Preset(
    "os-atlas", "rel1000", None, "gavel_v1",
    "OS-Atlas-Base-7B (a Qwen2-VL fine-tune for GUI grounding): Qwen2-VL's box tokens, "
    "top-left and bottom-right corners in 0-1000",
    source="OS-Copilot/OS-Atlas README (outputs are relative coordinates in 0-1000)",
    example="<|object_ref_start|>language switch<|object_ref_end|><|box_start|>(576,12),"
    "(592,42)<|box_end|>",
))  # fmt: skip
_register(Preset(
    "florence-2-ocr", "loc1000-quad", None, "gavel_v1",
    "Florence-2 asked with <OCR_WITH_REGION>: eight <loc_N> tokens (a quadrilateral) per text "
    "region, read as its bounding box",
    source="Florence-2's processor (quad_boxes of <OCR_WITH_REGION>)",
    example="STOP<loc_177><loc_226><loc_345><loc_224><loc_345><loc_327><loc_177><loc_331>",
))  # fmt: skip
_register(Preset(
    "kosmos-2", "patch32", None, "gavel_v1",
    "<object><patch_index_N><patch_index_M></object>: two cells of a 32 x 32 grid",
    source="Kosmos-2's processor (patch_index_to_coordinate), transformers",
    example="<phrase> a snowman</phrase><object><patch_index_0044><patch_index_0863></object>",
))  # fmt: skip
_register(Preset(
    "kosmos-2.5", "kosmos-2.5", None, "gavel_v1",
    "Kosmos-2.5 <ocr>: <bbox><x_N><y_N><x_N><y_N></bbox> before each text line, pixels of "
    "the processor's resized input (16 x 16 patches, at most 4096)",
    source="transformers' Kosmos-2.5 documentation (post_process: x * raw_width / width) and "
    "its image processor (the resized width and height)",
    example="<bbox><x_53><y_75><x_371><y_101></bbox>TOTAL 42.00",
))  # fmt: skip
_register(Preset(
    "deepseek-vl2", "rel999", None, "gavel_v1",
    "<|ref|>phrase<|/ref|><|det|>[[x1, y1, x2, y2]]<|/det|>, relative 0-999",
    source="deepseek-ai/DeepSeek-VL2, issue 100 (maintainers: 0-999)",
    example="<|ref|>compact car<|/ref|><|det|>[[220, 416, 417, 720]]<|/det|>",
))  # fmt: skip
_register(Preset(
    "deepseek-ocr", "rel999", None, "gavel_v1",
    "DeepSeek-OCR with <|grounding|>: <|ref|>type<|/ref|><|det|>[[x1, y1, x2, y2]]<|/det|> "
    "before each block, relative 0-999 (its script takes int(v / 999 * size))",
    source="deepseek-ai/DeepSeek-OCR, DeepSeek-OCR-vllm/run_dpsk_ocr_image.py (re_match, "
    "v / 999 * size)",
    example="<|ref|>title<|/ref|><|det|>[[115, 166, 466, 201]]<|/det|>\n# Übungsblatt Sto 6",
))  # fmt: skip
_register(Preset(
    "asmv2", "rel999", None, "gavel_v1",
    "ASMv2 (All-Seeing v2) scene-graph captions: <ref>/<pred> tags, each followed by "
    "<box>[[x1, y1, x2, y2], ...]</box> in 0-999; a relation's boxes repeat its objects'",
    source="OpenGVLab/all-seeing, all-seeing-v2/scripts_asmv2/visualize_rec.py "
    "(extract_objects; BOX_SCALE = 999: v / 999 * size)",
    example="a tall red <ref>bus</ref><box>[[290, 202, 835, 851]]</box> on a <ref>road</ref>"
    "<box>[[0, 604, 984, 999]]</box>",
))  # fmt: skip
_register(Preset(
    "kimi-vl", "rel1", None, "gavel_v1",
    'Kimi-VL writes {"bbox_2d": [x1, y1, x2, y2]} relative 0-1 (not 0-1000 like Qwen3-VL)',
    source="MoonshotAI/Kimi-VL, issue 56",
    example='{"bbox_2d": [0.280, 0.500, 0.520, 0.700]}',
))  # fmt: skip
_register(Preset(
    "molmo", "rel100", None, "gavel_v1",
    'Molmo points, <point x="17.0" y="66.5">, are percent of the image; a point is not a '
    "box, so such answers give no box",
    source="allenai Molmo model card (points in percent)",
    example='<point x="17.0" y="66.5" alt="person bottom left">person bottom left</point>',
))  # fmt: skip
_register(Preset(
    "llava-1.5", "rel1-square", None, "gavel_v1",
    "[x1, y1, x2, y2] in 0-1 of the image padded to a centred square (LLaVA-1.5's "
    "expand2square)",
    source="haotian-liu/LLaVA (expand2square; boxes in 0-1 of the padded image)",
    example="[0.12, 0.25, 0.5, 0.75]",
))  # fmt: skip
_register(Preset(
    "shikra", "rel1-square", None, "gavel_v1",
    "Shikra: [x1,y1,x2,y2] in 0-1 with three decimals, several boxes of one phrase in one "
    "bracket separated by ';', relative to the image padded to a centred square",
    source="shikras/shikra: PlainBoxFormatter (precision 3, ';' between boxes) and the "
    "Expand2square transform of its model config",
    example="A dog [0.102,0.350,0.488,0.912] and two cats "
    "[0.500,0.300,0.700,0.600;0.720,0.310,0.900,0.610].",
))  # fmt: skip
_register(Preset(
    "minigpt-v2", "rel100", None, "gavel_v1",
    "MiniGPT-v2: <p>phrase</p> {<x1><y1><x2><y2>}, integers in 0-100 of the image",
    source="Vision-CAIR/MiniGPT-4 eval_scripts/eval_ref.py (res = 100: v / 100 * size)",
    example="<p>a man</p> {<23><14><68><97>}",
))  # fmt: skip
_register(Preset(
    "ferret", "rel1000", None, "gavel_v1",
    "Ferret: phrase [x1, y1, x2, y2], integers in 0-1000 of the image; read as a list in "
    "prose (lenient)",
    source="apple/ml-ferret ferret/eval/model_refcoco.py (VOCAB_IMAGE_W = 1000, resize_bbox)",
    example="There is a dog [222, 330, 642, 977] on the sofa [0, 420, 999, 999].",
))  # fmt: skip
_register(Preset(
    "moondream", "rel1", None, "gavel_v1",
    'Moondream detect: {"objects": [{"x_min": …, "y_min": …, "x_max": …, "y_max": …}]} in 0-1',
    source="supervision's from_moondream; Moondream's detect API (normalized coordinates)",
    example='{"objects": [{"x_min": 0.12, "y_min": 0.3, "x_max": 0.44, "y_max": 0.86}]}',
))  # fmt: skip
_register(Preset(
    "paligemma", "loc1024-yx", None, "gavel_v1",
    "PaliGemma: <loc>×4 label per box, y1 x1 y2 x2 in 1024 bins, boxes separated by ' ; '; "
    "with a label filter only boxes labelled with a class of the 'detect a ; b' prompt",
    source="google/paligemma model card (detect: <locNNNN> y_min x_min y_max x_max, 1024 "
    "bins); supervision's from_paligemma (the parser the fine-tuning notebooks call)",
    example="<loc0219><loc0086><loc0921><loc0531> shirt ; "
    "<loc0207><loc0417><loc0921><loc0968> shirt",
))  # fmt: skip
_register(Preset(
    "paligemma-2", "loc1024-yx", None, "gavel_v1",
    "PaliGemma 2: PaliGemma's detection format (<loc>×4 label, y first, 1024 bins)",
    source="google/paligemma2 model card; supervision's from_paligemma",
    example="<loc0504><loc0430><loc0882><loc0815> 6 of clubs ; "
    "<loc0102><loc0482><loc0416><loc0840> 7 of clubs",
))  # fmt: skip
_register(Preset(
    "minicpm-v", "rel1000", None, "gavel_v1",
    "MiniCPM-V: <ref>phrase</ref><box>x1 y1 x2 y2</box>, blank-separated, relative 0-1000",
    source="OpenBMB/MiniCPM-V, issues 772 and 982 (maintainers)",
    example="<ref>book</ref><box>120 80 430 920</box>",
))  # fmt: skip
_register(Preset(
    "cogvlm", "rel1000", None, "gavel_v1",
    "CogVLM / CogAgent: [[x1,y1,x2,y2]] relative x 1000, zero-padded to three digits "
    "([[086,540,400,760]]); read as a list in prose (lenient)",
    source="THUDM/CogVLM README, \"Format of coordination\"",
    example="The cat is at [[086,540,400,760]].",
))  # fmt: skip
_register(Preset(
    "glm-4.5v", "rel1000", None, "gavel_v1",
    "GLM-4.5V / GLM-4.1V: <|begin_of_box|>[[x1,y1,x2,y2]]<|end_of_box|>, relative 0-1000",
    source="zai-org GLM-V grounding notes (0-1000)",
    example="<|begin_of_box|>[[94,598,177,991]]<|end_of_box|>",
))  # fmt: skip
_register(Preset(
    "claude", "pixel", 1092, "gavel_v1",
    "pixels of the image Claude sees; a long side of 1092 px keeps every aspect ratio within "
    "Claude's visual-token budget (1,568 tokens of 28 x 28 px), so Claude does not resize "
    "and the image it sees is the one sent (its padding is bottom and right only)",
    source="Claude docs, \"Coordinates and bounding boxes\"",
    example='{"boxes": [[10, 20, 110, 220]]}',
))  # fmt: skip
_register(Preset(
    "gpt-4.1", "pixel", 768, "gavel_v1",
    "pixels of the image as sent, asked for as JSON; a long side of 768 px is under both of "
    "the API's high-detail resizes (fit 2048 square, shortest side 768), so the model sees "
    "the image as sent",
    source="OpenAI vision guide (image resizing)",
    example='[{"label": "cup", "bbox": [10, 20, 110, 220]}]',
))  # fmt: skip
_register(Preset(
    "gpt-5", "pixel", 768, "gavel_v1",
    "as gpt-4.1: pixels of the image as sent (768 px long side, never resized by the API)",
    source="OpenAI vision guide (image resizing)",
    example='{"bounding_boxes": [[10, 20, 110, 220]]}',
))  # fmt: skip
_register(Preset(
    "llama-4", "pixel", None, "gavel_v1",
    "no box syntax is documented for Llama 4 (its card names image grounding only); gavel "
    "asks for [x1, y1, x2, y2] in pixels of the image as sent",
    source="Llama 4 model card (no box syntax); gavel's prompt",
    example='{"boxes": [[10, 20, 110, 220]]}',
))  # fmt: skip
_register(Preset(
    "pixtral", "pixel", 1024, "gavel_v1",
    "no box syntax is documented for Pixtral; gavel asks for pixels of the image as sent, at "
    "most 1024 px (the processor's longest edge, so the image is not resized again)",
    source="Mistral vision docs (no box syntax); gavel's prompt",
    example='{"boxes": [[10, 20, 110, 220]]}',
))  # fmt: skip
_register(Preset(
    "phi-4-multimodal", "pixel", None, "gavel_v1",
    "no box syntax is documented for Phi-4-multimodal; gavel asks for [x1, y1, x2, y2] in "
    "pixels of the image as sent",
    source="Phi-4-multimodal model card (no box syntax); gavel's prompt",
    example='{"boxes": [[10, 20, 110, 220]]}',
))  # fmt: skip

#: The families whose box tokens a fine-tune of a pixel-family model may be taught to write.
FINE_TUNE_TARGETS = ("paligemma", "florence-2")
#: The conventions of families that answer in pixels: their fine-tunes have ``BASE+TARGET``.
PIXEL_CONVENTIONS = ("pixel", "resized-pixel")


def _fine_tune(base: Preset, target: Preset) -> Preset:
    """``base`` fine-tuned to write ``target``'s box tokens: the base's images, frames and
    prompt, the target's convention (which the prompt then asks for)."""
    return Preset(
        f"{base.name}+{target.name}", target.box_format, base.max_image_side, base.gavel_prompt,
        f"{base.name} fine-tuned to write {target.name}'s boxes ({target.box_format}); "
        f"images as for {base.name}",
        base.frames,
        source=f"the fine-tune's training targets, in {target.name}'s format ({target.source})",
        example=target.example,
        base=base.name,
    )  # fmt: skip


for _base in [p for p in _PRESETS.values() if p.box_format in PIXEL_CONVENTIONS]:
    for _target in FINE_TUNE_TARGETS:
        _register(_fine_tune(_base, _PRESETS[_target]))
