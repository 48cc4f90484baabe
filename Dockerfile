# llm-serving-cost dashboard: Streamlit on port 8501, runtime set only (requirements.txt).
#   docker build -t llm-serving-cost:0.1.0 .
#   docker run --rm -p 8501:8501 llm-serving-cost:0.1.0
# Patch-pinned base; pin the digest too (python:3.11.17-slim-bookworm@sha256:...) when the
# registry is at hand.
FROM python:3.11.17-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none

WORKDIR /app

# requirements.txt ends with "." (this project, package `core`), so pyproject.toml and
# core/ must be in place before the install.
COPY requirements.txt pyproject.toml ./
COPY core/ core/
RUN pip install --no-cache-dir -r requirements.txt \
    && rm -rf build ./*.egg-info

# The app itself and its Streamlit settings (read from the working directory).
COPY .streamlit/ .streamlit/
COPY app/ app/

# Numeric, non-root user (no passwd entry needed; Kubernetes runAsNonRoot can verify it).
USER 10001

EXPOSE 8501

# Slim images have no curl: ask Streamlit's health endpoint with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"]

CMD ["streamlit", "run", "app/streamlit_app.py", "--server.address=0.0.0.0", "--server.port=8501"]
