"""``python -m kafkalog``: the same command line as the ``kafkalog`` console script."""

from .cli import main_entry

if __name__ == "__main__":
    main_entry()
