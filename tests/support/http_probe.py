#!/usr/bin/python3
"""A real HTTP client for the tests of `planb serve`'s metrics listener.

  http_probe.py get URL      prints the status code on the first line, then the body
  http_probe.py metrics URL  GETs URL, parses it as the Prometheus text exposition format with the official client
                             library's parser and prints one sample per line, "name{label="value",...} value",
                             sorted; exit 3 when the text does not parse
"""
import sys
import urllib.error
import urllib.request


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode("utf-8"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8"), error.headers


def main():
    mode, url = sys.argv[1], sys.argv[2]
    status, body, headers = fetch(url)
    if mode == "get":
        sys.stdout.write(f"{status}\n{body}")
        return 0
    from prometheus_client.parser import text_string_to_metric_families
    if status != 200:
        sys.stderr.write(f"status {status}\n")
        return 3
    if not headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"):
        sys.stderr.write(f"content type {headers.get('Content-Type')!r}\n")
        return 3
    lines = []
    try:
        for family in text_string_to_metric_families(body):
            for sample in family.samples:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                lines.append(f"{sample.name}{{{labels}}} {sample.value!r}")
    except Exception as error:  # the parser raises ValueError and others on malformed text
        sys.stderr.write(f"does not parse: {error}\n")
        return 3
    sys.stdout.write("".join(line + "\n" for line in sorted(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
