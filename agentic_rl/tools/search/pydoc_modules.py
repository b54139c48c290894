"""Which modules the pydoc index covers by default: the standard library and the third-party libraries
BigCodeBench(-Hard) tasks import, and the submodules left out of the walk (`exclude`)."""
from __future__ import annotations

# Standard-library modules BigCodeBench(-Hard) tasks and everyday coding need.
STDLIB_MODULES: tuple[str, ...] = (
    "builtins", "collections", "collections.abc", "itertools", "functools", "operator", "re",
    "string", "json", "csv", "math", "cmath", "statistics", "random", "heapq", "bisect", "array",
    "copy", "datetime", "time", "calendar", "zoneinfo", "typing", "dataclasses", "enum",
    "decimal", "fractions", "textwrap", "difflib", "unicodedata", "codecs", "base64", "binascii",
    "hashlib", "hmac", "secrets", "uuid", "struct", "io", "os", "os.path", "pathlib", "shutil",
    "glob", "fnmatch", "tempfile", "zipfile", "tarfile", "gzip", "zlib", "pickle", "sqlite3",
    "subprocess", "sys", "platform", "threading", "queue", "multiprocessing", "concurrent.futures",
    "socket", "select", "ssl", "smtplib", "ftplib", "email", "email.message", "email.mime.text",
    "email.mime.multipart", "http", "http.client", "http.server", "urllib", "urllib.parse",
    "urllib.request", "urllib.error", "html", "html.parser", "xml.etree.ElementTree",
    "ipaddress", "mimetypes", "logging", "warnings", "contextlib", "abc", "inspect",
    "getpass", "locale", "shlex", "argparse", "pprint", "traceback", "timeit", "wave", "cgi",
)
# Third-party libraries BigCodeBench-Hard imports (absent ones are skipped with one warning each),
# with the submodules that hold the APIs the tasks use.
THIRD_PARTY_MODULES: tuple[str, ...] = (
    "numpy", "numpy.random", "numpy.linalg", "numpy.fft",
    "pandas", "pandas.api.types", "pandas.plotting",
    "matplotlib", "matplotlib.pyplot", "matplotlib.axes", "matplotlib.figure", "matplotlib.colors",
    "matplotlib.patches", "matplotlib.collections", "matplotlib.dates", "matplotlib.ticker",
    "matplotlib.animation", "matplotlib.gridspec", "matplotlib.cm",
    "seaborn",
    "scipy.stats", "scipy.optimize", "scipy.spatial", "scipy.spatial.distance",
    "scipy.fft", "scipy.fftpack", "scipy.signal", "scipy.interpolate", "scipy.integrate",
    "scipy.linalg", "scipy.cluster.hierarchy", "scipy.cluster.vq", "scipy.ndimage", "scipy.io", "scipy.special",
    "sklearn.preprocessing", "sklearn.model_selection", "sklearn.linear_model",
    "sklearn.cluster", "sklearn.decomposition", "sklearn.metrics", "sklearn.ensemble",
    "sklearn.feature_extraction.text", "sklearn.naive_bayes", "sklearn.neighbors", "sklearn.tree",
    "sklearn.svm", "sklearn.pipeline", "sklearn.impute", "sklearn.datasets", "sklearn.manifold",
    "sklearn.compose", "sklearn.feature_selection", "sklearn.metrics.pairwise",
    "statsmodels.api", "statsmodels.tsa.seasonal", "statsmodels.tsa.arima.model",
    "statsmodels.formula.api",
    "requests", "bs4", "lxml.html", "lxml.etree", "nltk", "nltk.tokenize", "nltk.corpus",
    "nltk.stem", "psutil", "flask", "pytz", "dateutil.parser", "cv2", "PIL.Image",
    "PIL.ImageDraw", "PIL.ImageFilter", "PIL.ImageOps", "PIL.ImageFont", "PIL.ImageEnhance",
    "wordcloud", "regex", "openpyxl", "docx", "chardet", "Levenshtein", "shapely.geometry",
    "werkzeug.security", "wtforms", "flask_login", "flask_wtf", "flask_mail", "xlwt",
    "cryptography.fernet", "Crypto.Cipher.AES", "rsa", "pyquery", "soundfile", "librosa",
    "gensim.models", "geopandas", "keras.models", "keras.layers", "keras.optimizers",
)
DEFAULT_MODULES: tuple[str, ...] = STDLIB_MODULES + THIRD_PARTY_MODULES
DEFAULT_EXCLUDE: tuple[str, ...] = (
    "numpy.ma", "numpy.char", "numpy.ctypeslib", "numpy.rec", "numpy.dtypes", "numpy.typing",
    "numpy.polynomial", "numpy.strings", "numpy.testing", "numpy.exceptions",
    "scipy.stats.mstats", "scipy.stats.mstats_basic", "scipy.stats.mstats_extras",
    "pandas.arrays", "pandas.offsets", "pandas.tseries", "pandas.io", "pandas.errors",
    "nltk.drt", "nltk.logic", "nltk.sem", "nltk.inference", "nltk.ccg", "nltk.twitter",
    "nltk.app", "nltk.test", "matplotlib.transforms", "matplotlib.scale",
)
