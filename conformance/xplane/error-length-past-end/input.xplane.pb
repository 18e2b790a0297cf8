
main"host