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

# The pinned runtime set first (its layer is reused while only the code changes).
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

# The code runs from the working directory, where `core` and `app` import as packages,
# and Streamlit reads its settings from .streamlit/ there.
COPY .streamlit/ .streamlit/
COPY core/ core/
COPY app/ app/
COPY streamlit_app.py ./

# Numeric, non-root user (no passwd entry needed; Kubernetes runAsNonRoot can verify it).
USER 10001

EXPOSE 8501

# Slim images have no curl: ask Streamlit's health endpoint with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"]

CMD ["streamlit", "run", "streamlit_app.py", "--server.address=0.0.0.0", "--server.port=8501"]
