from memseek.cli import main

raise SystemExit(main())
