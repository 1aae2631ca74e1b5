#include "runners.h"

int main(int argc, char** argv) { return cdc::capture::RunCli(argc, argv); }
