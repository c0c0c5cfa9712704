"""The harness lives in bench/ at the repository root, which is not an installed package."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# Two tiny conversations in LoCoMo's own shape, with the malformed ids the real file has.
TOY_LOCOMO = [
    {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
                {
                    "speaker": "Bo",
                    "dia_id": "D1:2",
                    "text": "I am training for a marathon.",
                    "blip_caption": "a photo of running shoes",
                },
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "Rex chewed my violin case."},
            ],
        },
        "observation": {
            "session_1_observation": {
                "Ann": [["Ann adopted a puppy named Rex.", "D1:1"]],
                "Bo": [["Bo is training for a marathon.", ["D1:2"]]],
            },
            "session_2_observation": {
                "Ann": [["Ann's puppy Rex chewed her violin case.", "D2:1, D1:1"]],
            },
        },
        "qa": [
            {
                "question": "What is the name of Ann's puppy?",
                "answer": "Rex",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "What did Rex chew?",
                "answer": "violin case",
                "evidence": ["D2:01; D1:1"],
                "category": 1,
            },
            {
                "question": "Does Bo own a cat?",
                "adversarial_answer": "yes",
                "evidence": ["D1:2"],
                "category": 5,
            },
            {"question": "Unanswerable", "answer": "x", "evidence": ["D"], "category": 2},
        ],
    },
    {
        "sample_id": "conv-b",
        "conversation": {
            "speaker_a": "Cy",
            "speaker_b": "Di",
            "session_1_date_time": "9:00 am on 1 January, 2024",
            "session_1": [{"speaker": "Cy", "dia_id": "D1:1", "text": "I moved to Oslo."}],
        },
        "observation": {"session_1_observation": {"Cy": [["Cy moved to Oslo.", "D1:1"]]}},
        "qa": [
            {
                "question": "Where did Cy move?",
                "answer": "Oslo",
                "evidence": ["D:1:1"],
                "category": 2,
            }
        ],
    },
]

TOY_MADIAL_MEMORY = [
    {
        "1": {
            "time": "2023-12-25",
            "scene": "s",
            "emotion": "e",
            "event": "Bart在圣诞节晚会上跳舞。",
            "user-id": 1,
            "id": "1",
        }
    },
    {
        "2": {
            "time": "2023-03-07",
            "scene": "s",
            "emotion": "e",
            "event": "Bart获得一百米第一名。",
            "user-id": 1,
            "id": "2",
        }
    },
    {
        "3": {
            "time": "2023-05-15",
            "scene": "s",
            "emotion": "e",
            "event": "Lisa喜欢芒果冰淇淋。",
            "user-id": 2,
            "id": "3",
        }
    },
]
TOY_MADIAL_DIALOGUE = [
    {
        "dialogue": [
            "<BOD>\n",
            '<Bart>:"元旦晚会我要跳舞！"\n',
            '<Assistant>:"太棒了！"\n',
            '<Assistant>:"你记得圣诞节晚会吗？"\n',
            "<EOD>\n",
        ],
        "test-turn": [3],
        "relevant-id": [1],
        "user-id": 1,
        "id": 0,
    },
    {
        "dialogue": ["<BOD>\n", '<Lisa>:"我想吃冰淇淋"\n', '<Assistant>:"芒果味？"\n', "<EOD>\n"],
        "test-turn": [2],
        "relevant-id": [3],
        "user-id": 2,
        "id": 1,
    },
]


# MemoryBank-CN's shape: per user name, dated turns; probing questions without gold.
TOY_MEMORYBANK = {
    "张三": {
        "name": "张三",
        "history": {
            "2023-04-27": [
                {"query": "今天我在公园跑了五公里。", "response": "真厉害！"},
                {"query": "我喜欢听爵士乐。", "response": "爵士乐很放松。"},
            ],
            "2023-05-02": [{"query": "我去了博物馆看恐龙展。", "response": "听起来很有趣。"}],
        },
        "meta_information": {"name": "张三"},
    }
}
TOY_PROBES = [{"张三": ["在4月27号这天，我在公园里跑了多久？", "我喜欢听什么类型的音乐？",
                       "在6月1号我做了什么？"]}]  # fmt: skip


@pytest.fixture
def toy_data(tmp_path: Path) -> Path:
    """A data folder laid out like ../shared/bench, holding the toy data above."""
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json").write_text(json.dumps(TOY_LOCOMO), encoding="utf-8")
    madial = tmp_path / "madial_bench_zh"
    madial.mkdir()
    for name, rows in (("memory", TOY_MADIAL_MEMORY), ("dialogue", TOY_MADIAL_DIALOGUE)):
        lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
        (madial / f"MADial-Bench-zh-{name}.json").write_text(lines + "\n", encoding="utf-8")
    bank = tmp_path / "memorybank_cn"
    bank.mkdir()
    (bank / "memory_bank_cn.json").write_text(json.dumps(TOY_MEMORYBANK), encoding="utf-8")
    probes = "\n".join(json.dumps(line, ensure_ascii=False) for line in TOY_PROBES)
    (bank / "probing_questions_cn.jsonl").write_text(probes + "\n", encoding="utf-8")
    return tmp_path
