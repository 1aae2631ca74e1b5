#include "runners.h"

int main(int argc, char** argv) { return cdc::logtool::RunCli(argc, argv); }
