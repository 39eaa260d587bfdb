.PHONY: install test lint fix eval

install:
	pip install -e '.[dev]'

test:
	pytest

lint:
	ruff check proxy policies tests bench
	ruff format --check proxy policies tests bench
	mypy

fix:
	ruff check --fix proxy policies tests bench
	ruff format proxy policies tests bench

eval:
	memproxy eval --scenarios ../shared/eval/scenarios
