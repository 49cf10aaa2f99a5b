import sys

from stream.cli.main import main

sys.exit(main())
