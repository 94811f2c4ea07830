"""What the chat-template golden scripts share: paths, and a pinned clock for strftime_now.

transformers' `strftime_now(format)` global calls `datetime.now().strftime(format)` through
the module-level name `datetime` in transformers.utils.chat_template_utils; replacing that name
pins what templates see, so goldens don't change with the day they are made.
"""

import subprocess
import datetime as real_datetime
import os

from transformers.utils import chat_template_utils

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "Tests", "PhiTextTests", "Fixtures", "chat_template")
SHARED = subprocess.check_output([os.path.join(ROOT, "scripts", "fixtures.sh")], text=True).strip()
# A local wall-clock time; the Swift tests pin ChatTemplate.now to the same local time.
NOW = real_datetime.datetime(2025, 3, 9, 14, 5, 6)


class _FixedDatetime(real_datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return NOW


def pin_clock():
    chat_template_utils.datetime = _FixedDatetime
