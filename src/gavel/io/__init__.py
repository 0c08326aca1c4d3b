"""Reading and writing the JSONL files that connect the steps."""
